// The heap pool's live blocks as the writer sees them (track_live_heap): the
// preload's exit-time reachability scan and memtrail_gtest read them. Not
// installed.
#pragma once

#include <cstdint>
#include <vector>

namespace memtrail::detail {

struct LiveBlock {
  std::uint64_t address = 0;
  std::uint64_t size = 0;
  std::uint32_t stack = 0;   // stack node id of the allocation
  std::uint32_t thread = 0;  // thread table id of the allocation
  std::uint64_t time_ns = 0;
};

// Turns live-block tracking of heap_pool() on or off (also set by
// RecorderOptions::track_live_heap and MEMTRAIL_TRACK_LIVE_HEAP=1). The
// writer, not the hot path, maintains the map from alloc/free events.
void set_track_live_heap(bool on);

// The heap pool's live blocks as of the last drain (call flush_all_threads()
// first for an up-to-date answer). Empty when tracking is off.
std::vector<LiveBlock> live_blocks();

}  // namespace memtrail::detail
