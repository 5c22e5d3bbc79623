// The counters' growth and their figures into the Analysis (counters.hpp).
#include "trackers/counters.hpp"

namespace memtrail::detail {

void CountersTracker::on_pool_out(PoolData& pool, PoolStats& out) {
  out.allocations = pool.allocations;
  out.reuses = pool.reuses;
  out.frees = pool.frees;
  out.bytes_allocated = pool.bytes_allocated;
  out.segment_reserves = pool.segment_reserves;
  out.segment_releases = pool.segment_releases;
  out.reuse_ratio = pool.allocations ? static_cast<double>(pool.reuses) / pool.allocations : 0;
}

void CountersTracker::finish(Analysis& a) {
  for (const PoolStats& p : a.pools) {
    if (p.upstream) continue;  // its blocks are the segments of the pools above it
    a.summary.allocations += p.allocations;
    a.summary.bytes_allocated += p.bytes_allocated;
    a.summary.frees += p.frees;
  }
}

}  // namespace memtrail::detail
