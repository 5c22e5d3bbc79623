// How long the blocks freed in the range lived (free time - alloc time), a
// log2 histogram over the leaf pools (Analysis::lifetime_histogram: the
// report's LIFETIMES, the JSON's histograms.lifetime_ns, the GUI's).
#pragma once

#include "trackers/block_tracker.hpp"
#include "trackers/pool_histogram.hpp"

namespace memtrail::detail {

class LifetimeHistogramTracker : public BlockTracker {
 public:
  explicit LifetimeHistogramTracker(const AnalysisOptions& /*o*/) {}

  void pools_grew(std::uint32_t count) { lifetimes_.pools_grew(count); }
  [[gnu::always_inline]] void on_release(PoolData& /*pool*/, const ReleasedBlock& r) {
    if (!r.in_range) return;
    // Threads' buffers interleave: a free may be stamped before its alloc.
    const std::uint64_t alloc_ns = r.block.time_ns;
    lifetimes_.add(r.pool_slot, r.time_ns >= alloc_ns ? r.time_ns - alloc_ns : 0);
  }
  void finish(Analysis& a) { a.lifetime_histogram = lifetimes_.leaf_sum(a); }

 private:
  PoolHistograms lifetimes_;
};

}  // namespace memtrail::detail
