// The counters' growth and their figures into the Analysis (counters.hpp).
#include "trackers/counters.hpp"

namespace memtrail::detail {

void CountersTracker::finish(Analysis& a) {
  for (std::size_t i = 0; i < sites_.size() && i < a.sites.size(); ++i) {
    Site& s = a.sites[i];
    s.calls = sites_[i].calls;
    s.reuses = sites_[i].reuses;
    s.bytes_allocated = sites_[i].bytes_allocated;
  }
  for (PoolStats& out : a.pools) {
    if (out.info.id >= pools_.size()) continue;
    const Pool& p = pools_[out.info.id];
    out.allocations = p.allocations;
    out.reuses = p.reuses;
    out.frees = p.frees;
    out.bytes_allocated = p.bytes_allocated;
    out.segment_reserves = p.segment_reserves;
    out.segment_releases = p.segment_releases;
    out.reuse_ratio = p.allocations ? static_cast<double>(p.reuses) / p.allocations : 0;
    if (out.upstream) continue;  // its blocks are the segments of the pools above it
    a.summary.allocations += p.allocations;
    a.summary.bytes_allocated += p.bytes_allocated;
    a.summary.frees += p.frees;
  }
}

}  // namespace memtrail::detail
