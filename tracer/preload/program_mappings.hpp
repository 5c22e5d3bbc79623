// The program's own anonymous read-write mappings (mmap calls the preload
// interposes, made outside the tracer): roots of the exit-time leak scan, as
// Valgrind scans every read-write mapping of its client. CPython's pymalloc
// keeps its small objects in such arenas (256 KiB mmaps): a list's item
// array allocated by malloc is pointed to only from there.
//
// Only the program's calls are seen: glibc's malloc maps its arenas and big
// chunks with its internal mmap, which no interposer sees, so heap blocks
// never become roots themselves. With another allocator (jemalloc, ...)
// its arenas come through mmap like the program's, and would make every
// block reachable: the scan uses these roots only over glibc's malloc.
//
// A fixed table with a spinlock, as linker_blocks: no allocation inside
// mmap. Past its size, more mappings are not remembered (they are then not
// roots: blocks they alone point to read as leaked, never a crash).
#pragma once

#include <cstddef>
#include <vector>

#include "reachability.hpp"

namespace memtrail::preload {

// After a successful mmap / mremap by the program (not the tracer).
void program_mapped(const void* address, std::size_t length, int prot, int flags);
// After a successful munmap (or the old range of a moving mremap).
void program_unmapped(const void* address, std::size_t length);
// After a successful mremap of [old, old + old_size) to [now, now + new_size).
void program_remapped(const void* old, std::size_t old_size, const void* now, std::size_t new_size);

// The remembered mappings now.
std::vector<MemoryRange> program_mappings();

}  // namespace memtrail::preload
