// The sizes of the allocations counted in the range, a log2 histogram over
// the leaf pools (Analysis::size_histogram: the report's ALLOCATION SIZES,
// the JSON's histograms.size_bytes, the GUI's size histogram).
#pragma once

#include "trackers/block_tracker.hpp"
#include "trackers/pool_histogram.hpp"

namespace memtrail::detail {

class SizeHistogramTracker : public BlockTracker {
 public:
  explicit SizeHistogramTracker(const AnalysisOptions& /*o*/) {}

  void pools_grew(std::uint32_t count) { sizes_.pools_grew(count); }
  [[gnu::always_inline]] void on_alloc(PoolData& /*pool*/, SiteData& /*site_data*/,
                                       std::uint32_t pool_slot, std::uint32_t /*site*/,
                                       const Event& e) {
    sizes_.add(pool_slot, e.size);
  }
  void finish(Analysis& a) { a.size_histogram = sizes_.leaf_sum(a); }

 private:
  PoolHistograms sizes_;
};

}  // namespace memtrail::detail
