// The sites' and pools' counters (Site::calls, reuses, bytes_allocated;
// PoolStats::allocations, reuses, frees, bytes_allocated, reuse_ratio,
// segment_reserves, segment_releases; the
// summary's allocations, bytes allocated and frees, summed over the leaf
// pools: the report's TOP SITES and POOLS, the JSON's, the call tree's
// allocation and bytes costs, the GUI's Summary and Sites). The pools'
// peaks are the pool timelines tracker's (the maxima of its series); the
// process-wide peak stays the Engine's: it settles which bytes each site
// holds at the peak (engine.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "trackers/block_tracker.hpp"

namespace memtrail::detail {

class CountersTracker : public BlockTracker {
 public:
  explicit CountersTracker(const AnalysisOptions& /*o*/) {}

  void pools_grew(std::uint32_t count) { pools_.resize(count); }
  void sites_grew(std::uint32_t count) {
    if (count > sites_.size()) sites_.resize(std::max<std::size_t>(count, 2 * sites_.size()));
  }
  [[gnu::always_inline]] void on_alloc(std::uint32_t pool_slot, std::uint32_t site,
                                       const Event& e) {
    SiteCounts& s = sites_[site];
    Pool& p = pools_[pool_slot];
    ++s.calls;
    s.bytes_allocated += e.size;
    ++p.allocations;
    p.bytes_allocated += e.size;
    if (e.kind == EventKind::reuse) {
      ++s.reuses;
      ++p.reuses;
    }
  }
  [[gnu::always_inline]] void on_release(const ReleasedBlock& r) {
    if (r.in_range) ++pools_[r.pool_slot].frees;
  }
  void on_late_free(std::uint32_t pool_slot) { ++pools_[pool_slot].frees; }
  void on_segment(std::uint32_t slot, const Event& e) {
    Pool& p = pools_[slot];
    ++(e.kind == EventKind::segment_reserve ? p.segment_reserves : p.segment_releases);
  }
  // Into the sites (by the Engine's index, the Analysis' order), the pools
  // (by slot) and the summary (the leaf pools' sums).
  void finish(Analysis& a);

 private:
  // Power-of-two strides: an index is a shift, not a multiplication.
  struct alignas(32) SiteCounts {
    std::uint64_t calls = 0, reuses = 0, bytes_allocated = 0;
  };
  struct alignas(64) Pool {
    std::uint64_t allocations = 0, reuses = 0, frees = 0, bytes_allocated = 0;
    std::uint64_t segment_reserves = 0, segment_releases = 0;
  };

  std::vector<SiteCounts> sites_;  // by the Engine's site index
  std::vector<Pool> pools_;        // by the Engine's pool slot
};

}  // namespace memtrail::detail
