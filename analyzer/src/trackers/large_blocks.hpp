// The largest blocks of the range (Analysis::large_blocks: the JSON export's
// large_blocks, the Chrome export's slices, the GUI's block lists): blocks of
// at least AnalysisOptions::large_block_bytes, freed in the run or leaked at
// its end, at most max_large_blocks of them, the largest kept.
#pragma once

#include <cstddef>
#include <vector>

#include "trackers/block_tracker.hpp"

namespace memtrail::detail {

class LargeBlocksTracker : public BlockTracker {
 public:
  explicit LargeBlocksTracker(const AnalysisOptions& o)
      : min_bytes_(o.large_block_bytes), max_blocks_(o.max_large_blocks) {}

  [[gnu::always_inline]] void on_release(PoolData& /*pool*/, const ReleasedBlock& r) {
    const LiveBlock& b = r.block;
    if (b.in_range && b.size >= min_bytes_)
      keep(BlockLifetime{PoolId{r.pool}, SiteId{b.site}, r.address, b.size, b.time_ns, r.time_ns,
                         b.thread});
  }
  void on_leak(std::uint32_t pool_slot, std::uint64_t address, const LiveBlock& b, LeakClass cls) {
    if (b.size >= min_bytes_)
      keep(BlockLifetime{PoolId{pool_slot}, SiteId{b.site}, address, b.size, b.time_ns, kTimeMax,
                         b.thread, cls});
  }
  // Sorted by allocation time.
  void finish(Analysis& a);

 private:
  // Into the min-heap by size: the smallest kept is the first to go.
  void keep(const BlockLifetime& b);

  std::uint64_t min_bytes_;
  std::size_t max_blocks_;
  std::vector<BlockLifetime> smallest_first_;  // a heap (std::push_heap) while running
};

}  // namespace memtrail::detail
