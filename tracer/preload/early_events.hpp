// Heap events that happen before the recorder starts: ld.so's, libstdc++'s
// start-up pool, constructors of linked libraries. The preload's own
// constructor runs after those of the libraries it depends on, so without
// this they would be missing from every trace.
//
// Until the constructor starts the recorder, the interposers store each
// event with its stack (unw_backtrace) in static storage; the constructor
// hands them to the recorder, in order, right after it starts.
#pragma once

#include <atomic>
#include <cstddef>

#include "memtrail/event.hpp"

namespace memtrail::preload {

// True from load until the recorder starts (or is known never to start).
extern std::atomic<bool> g_early_open;

inline bool early_open() {
  return g_early_open.load(std::memory_order_relaxed);
}

void early_alloc(const void* block, std::size_t requested, AllocFn fn, std::size_t alignment,
                 const void* caller);
void early_free(const void* block, std::size_t size, AllocFn fn);

// Stops buffering. With `record`, hands the buffered events to the running
// recorder (blocks ld.so made become linker blocks, as they would have);
// returns how many events did not fit the buffer.
std::size_t close_early_events(bool record);

}  // namespace memtrail::preload
