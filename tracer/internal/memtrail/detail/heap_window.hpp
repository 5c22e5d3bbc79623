// The heap window behind memtrail/gtest.hpp's per-test limits. Not installed:
// memtrail_gtest is compiled with the project, its users include only
// memtrail/gtest.hpp.
#pragma once

#include <cstdint>

namespace memtrail::detail {

// Heap blocks allocated at or after `since_ns` (trace time): the bytes of
// those still live and the most that were live at once. Maintained by the
// writer with the live-block map (needs track_live_heap), in event-time order
// within each drain, so a single-threaded window is exact.
struct HeapWindow {
  std::uint64_t since_ns = 0;
  std::uint64_t live_bytes = 0;
  std::uint64_t live_blocks = 0;
  std::uint64_t peak_bytes = 0;
};

// Restarts the window at `since_ns`: blocks already live and allocated at or
// after it are counted at once. Call flush_all_threads() first.
void reset_heap_window(std::uint64_t since_ns);

// The window as of the last drain (flush_all_threads() first).
HeapWindow heap_window();

}  // namespace memtrail::detail
