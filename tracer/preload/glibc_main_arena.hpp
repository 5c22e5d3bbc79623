// glibc malloc's main arena (its `struct malloc_state main_arena`, in libc's
// .data): allocator state, not the program's, so no root of the leak scan.
//
// Its `last_remainder` keeps the header address of the chunk the last small
// request split off, long after that chunk was handed out or merged with
// its neighbours: a later block that covers the old header then holds an
// interior pointer from a "root", and a definite leak reads "possibly
// lost". Which block covers it depends on which thread split last, so the
// class changed from run to run (1 run in ~100 of tests/preload/
// recycled_heap.cpp, every run of tests/leaks/programs/stale_remainder.c).
// Valgrind and LeakSanitizer replace malloc: they have no such state.
//
// main_arena is a local symbol; it is found once at start-up by its
// static initialiser's signature (glibc 2.27 and later, 64-bit):
//   next == &main_arena, next_free == NULL, attached_threads == 1
// at the offsets of `struct malloc_state` (2200 bytes, `next` at 2160), in
// libc's writable segment. Not found (another malloc, another layout): the
// scan keeps the whole segment as a root, as before.
#pragma once

#include "reachability.hpp"

namespace memtrail::preload {

// At start-up, while only the main arena exists (before the program's
// threads) and dl_iterate_phdr may be called.
void find_glibc_main_arena();

// The arena's bytes; empty when it was not found.
MemoryRange glibc_main_arena();

}  // namespace memtrail::preload
