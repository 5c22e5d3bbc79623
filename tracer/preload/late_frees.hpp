// Heap blocks freed on a thread past its exit notice (the recorder's pthread
// key destructor), where nothing is recorded: glibc frees the DTV of every
// cached stack an ending thread evicts from its stack cache there, and the
// program's pthread keys created after the recorder's free their data there.
// Left as they were, such blocks stay live in the trace, and the exit scan
// classifies their recycled bytes (a block pointed to by the allocator's
// bins, or reused by the scan's own vectors of block addresses, makes every
// block look reachable).
//
// Each such free is remembered here and recorded by the next thread that
// can: the one whose traced allocation gets the same address back (just
// before that allocation), or the exit scan (for those still pending).
#pragma once

#include <cstdint>

#include "memtrail/recorder.hpp"

namespace memtrail::preload {

// A free trace_free could not record (the thread had exited).
void remember_late_free(const void* block);

// Records the pending free of `block`, if any, from the calling thread.
void settle_late_free_slow(const void* block);
bool late_frees_pending();

// Before recording a traced allocation: one load while nothing is pending.
inline void settle_late_free(const void* block) {
  if (__builtin_expect(late_frees_pending(), 0)) settle_late_free_slow(block);
}

// For the exit scan: true (and the free recorded) when `address` was freed
// late; the block is then not live.
bool settle_late_free_at_exit(std::uint64_t address);

}  // namespace memtrail::preload
