// A pool's live state in the analysis pass: its live blocks, segments and
// bytes, which the Engine keeps (it decides what is live) and the block
// trackers of the pools read in place (trackers/block_tracker.hpp), and the
// fragmentation measured over them (the Engine's segment maps, the pool
// timelines tracker's samples).
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "flat_map.hpp"
#include "live_block.hpp"
#include "memtrail/analysis.hpp"

namespace memtrail::detail {

struct SegmentRec {
  std::uint64_t size = 0;
  SegmentDetail detail = SegmentDetail::whole;
};
using SegmentTable = std::map<std::uint64_t, SegmentRec>;  // address -> segment

struct PoolLive {
  AddressMap<LiveBlock> live;
  SegmentTable segments;
  std::uint64_t used = 0, reserved = 0;
  bool has_blocks = false;    // ever held an alloc (fragmentation is about blocks)
  bool has_segments = false;  // ever had a segment event
};

// Free space between the live blocks inside the segments. Adjacent `map`
// segments (pages of one expandable reservation) count as one range; whole
// segments never merge (a block cannot straddle two cudaMalloc's).
// `blocks` (address, size) are sorted in place.
Fragmentation compute_fragmentation(const SegmentTable& segments,
                                    std::vector<std::pair<std::uint64_t, std::uint64_t>>& blocks,
                                    std::uint64_t time_ns);

}  // namespace memtrail::detail
