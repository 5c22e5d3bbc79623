// Scrubbing new heap blocks, so the exit-time leak scan sees only what the
// program wrote. Under glibc a new block's bytes still hold whatever the
// memory's earlier life left there -- often addresses of other blocks -- and
// a stale address in an unwritten byte would make a leak look indirect or
// reachable (Valgrind counts only initialised words; LeakSanitizer's size
// classes rarely mix). With MEMTRAIL_SCRUB=alloc (the default) every new
// block's usable bytes are filled before the program gets it with what a
// fresh block would hold without the profiler: 0, or under glibc's
// MALLOC_PERTURB_ (or GLIBC_TUNABLES glibc.malloc.perturb) the byte glibc
// fills new blocks with, so that debugging aid keeps working. Pages of a
// large block that are not resident (never touched since the kernel gave
// them: zero) are left alone, so a program that allocates much and touches
// little keeps its RSS. calloc needs nothing; realloc fills only the bytes
// beyond the old block's usable size; glibc's mmapped chunks are fresh pages
// and are skipped. When the next allocator has no malloc_usable_size of its
// own (glibc's would read a foreign header), the requested bytes are filled
// and realloc's are not. MEMTRAIL_SCRUB=N fills only a block's first N bytes
// (cheaper; exact only for blocks up to N bytes), MEMTRAIL_SCRUB=0 nothing.
// Only called while tracing is on, so an untraced process pays nothing. The
// cost and the reasoning for the default: docs/tracing.md.
#pragma once

#include <malloc.h>

#include <cstddef>

#include "memtrail/event.hpp"
#include "next_allocator.hpp"

namespace memtrail::preload {

extern bool g_scrub_on;

// Reads MEMTRAIL_SCRUB, glibc's perturb setting and whether malloc is
// glibc's (its chunk header says which chunks are mmapped). Called once from
// the preload's constructor; blocks allocated before it are scrubbed the
// default way.
void init_block_scrub();

// Fills p's bytes from `from` on: up to its usable size, or up to
// `requested` where the usable size is unknown (none for a glibc mmapped
// chunk).
void scrub_block_from(void* p, std::size_t from, std::size_t requested);

[[gnu::always_inline]] inline void scrub_new_block(void* p, std::size_t requested, AllocFn fn) {
  if (g_scrub_on && fn != AllocFn::calloc && fn != AllocFn::realloc)
    scrub_block_from(p, 0, requested);
}

// realloc: the old block's usable size, taken before the call; ~0 when it
// is unknown (then nothing is filled).
std::size_t scrub_old_usable(void* old);
// realloc: fills what the new block has beyond the old one's usable bytes
// (moved or grown in place alike: glibc copies the old usable bytes).
[[gnu::always_inline]] inline void scrub_grown_block(void* p, std::size_t old_usable,
                                                     std::size_t requested) {
  if (g_scrub_on && p != nullptr && old_usable != ~std::size_t{0})
    scrub_block_from(p, old_usable, requested);
}

}  // namespace memtrail::preload
