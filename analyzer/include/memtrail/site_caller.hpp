// The frame a one-line site list names: the first frame of a stack outside
// the allocation machinery (allocator wrappers such as PyMem_Malloc or
// CRYPTO_strndup, operator new and std::allocator, libc and ld.so
// internals, memtrail's own libraries). The innermost frame of a heap stack
// is almost always `malloc` or `operator new`, which says nothing about who
// allocated (heaptrack and Valgrind skip them the same way).
#pragma once

#include <cstddef>
#include <string>

#include "memtrail/frame.hpp"

namespace memtrail {

bool is_allocation_machinery(const Frame& f);

// Index of the first frame outside the machinery; 0 when every frame is
// machinery (then the innermost says the most) or the stack is empty.
std::size_t first_caller_frame(const FrameList& frames);

// "leak_calloc at leaks.cpp:34 (leaks)": that frame, described, with the
// file name of its module; "(no stack recorded)" for an empty stack.
std::string caller_text(const FrameList& frames);

}  // namespace memtrail
