// Valgrind memcheck's --leak-check-heuristics (its default is "all"): interior
// pointers that C++ and some C libraries make on purpose, so a block reached
// through one counts as reached through its start, not as "possibly lost".
//
// Followed here, with memcheck's exact tests (mc_leak.c, heuristic_reachedness):
//   stdstring  ptr = block + 24; word 1 (capacity) + 25 = block size and
//              word 0 (length) <= capacity: the pre-C++11 COW std::string rep
//   length64   ptr = block + 8; word 0 = block size - 8 (sqlite's sizes)
//   newarray   ptr = block + 8; word 0 = n > 0 and n divides block size - 8:
//              new T[n] of a T with a destructor (the array cookie)
// Not followed: multipleinheritance (a pointer to a secondary base's vtable
// slot), which needs to know which addresses are vtables (memcheck asks its
// debug info for _ZTV symbols); such blocks stay "possibly lost" here.
#pragma once

#include <cstdint>

#include "reachability.hpp"

namespace memtrail::preload {

// True when `pointer` (inside `block`, not its start) matches one of the
// heuristics above. Reads the block's first two words through `reader`.
bool interior_pointer_is_intended(std::uint64_t pointer, const HeapBlock& block,
                                  MemoryReader& reader);

}  // namespace memtrail::preload
