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

#include <cstdint>

#include "trackers/block_tracker.hpp"

namespace memtrail::detail {

class CountersTracker : public BlockTracker {
 public:
  explicit CountersTracker(const AnalysisOptions& /*o*/) {}

  // A pool's counters, in the Engine's record of the pool.
  struct PoolData {
    std::uint64_t allocations = 0, reuses = 0, frees = 0, bytes_allocated = 0;
    std::uint64_t segment_reserves = 0, segment_releases = 0;
  };

  // A site's counters, in the Engine's record of the site.
  struct SiteData {
    std::uint64_t calls = 0, reuses = 0, bytes_allocated = 0;
  };

  [[gnu::always_inline]] void on_alloc(PoolData& pool, SiteData& s, std::uint32_t /*pool_slot*/,
                                       std::uint32_t /*site*/, const Event& e) {
    ++s.calls;
    s.bytes_allocated += e.size;
    ++pool.allocations;
    pool.bytes_allocated += e.size;
    if (e.kind == EventKind::reuse) {
      ++s.reuses;
      ++pool.reuses;
    }
  }
  [[gnu::always_inline]] void on_release(PoolData& pool, const ReleasedBlock& r) {
    if (r.in_range) ++pool.frees;
  }
  void on_late_free(PoolData& pool) { ++pool.frees; }
  void on_segment(PoolData& pool, const Event& e) {
    ++(e.kind == EventKind::segment_reserve ? pool.segment_reserves : pool.segment_releases);
  }
  void on_pool_out(PoolData& pool, PoolStats& out);
  void on_site_out(SiteData& s, Site& out) {
    out.calls = s.calls;
    out.reuses = s.reuses;
    out.bytes_allocated = s.bytes_allocated;
  }
  // Into the summary: the leaf pools' sums, from their PoolStats.
  void finish(Analysis& a);
};

}  // namespace memtrail::detail
