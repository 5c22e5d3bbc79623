// Scrubbing new heap blocks, so the exit-time leak scan sees only what the
// program wrote. Under glibc a new block's bytes still hold whatever the
// memory's earlier life left there -- often addresses of other blocks -- and
// a stale address in an unwritten byte would make a leak look indirect or
// reachable (Valgrind counts only initialised words; LeakSanitizer's size
// classes rarely mix). With MEMTRAIL_SCRUB=alloc (the default) every new
// block's usable bytes are zeroed before the program gets it: the program
// sees what fresh memory holds, so its behaviour is one it could have had
// without the profiler. calloc needs nothing; realloc zeroes only the bytes
// beyond the old block's usable size; glibc's mmapped chunks are fresh zero
// pages and are skipped. MEMTRAIL_SCRUB=N zeroes only a block's first N
// bytes (cheaper; exact only for blocks up to N bytes), MEMTRAIL_SCRUB=0
// nothing. Only called while tracing is on, so an untraced process pays
// nothing. The cost and the reasoning for the default: docs/tracing.md.
#pragma once

#include <malloc.h>

#include <cstddef>

#include "memtrail/event.hpp"
#include "next_allocator.hpp"

namespace memtrail::preload {

extern bool g_scrub_on;

// Reads MEMTRAIL_SCRUB and whether malloc is glibc's (its chunk header says
// which chunks are mmapped). Called once from the preload's constructor;
// blocks allocated before it are scrubbed the default way.
void init_block_scrub();

// Zeroes p's usable bytes from `from` on (none for a glibc mmapped chunk).
void scrub_block_from(void* p, std::size_t from);

[[gnu::always_inline]] inline void scrub_new_block(void* p, AllocFn fn) {
  if (g_scrub_on && fn != AllocFn::calloc && fn != AllocFn::realloc) scrub_block_from(p, 0);
}

// realloc: the old block's usable size, taken before the call.
[[gnu::always_inline]] inline std::size_t scrub_old_usable(void* old) {
  return g_scrub_on && old != nullptr ? g_next.malloc_usable_size(old) : 0;
}
// realloc: zeroes what the new block has beyond the old one's usable bytes
// (moved or grown in place alike: glibc copies the old usable bytes).
[[gnu::always_inline]] inline void scrub_grown_block(void* p, std::size_t old_usable) {
  if (g_scrub_on && p != nullptr) scrub_block_from(p, old_usable);
}

}  // namespace memtrail::preload
