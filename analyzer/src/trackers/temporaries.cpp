// The temporaries' growth paths and their figures into the Analysis
// (temporaries.hpp).
#include "trackers/temporaries.hpp"

#include <algorithm>
#include <unordered_set>

#include "engine.hpp"

namespace memtrail::detail {

TemporariesTracker::LastAlloc& TemporariesTracker::grow_threads(std::uint32_t thread) {
  const std::uint32_t slot = std::min(thread, kMaxThreads - 1);
  if (slot >= last_by_thread_.size()) {
    last_by_thread_.resize(slot + 1);
    thread_slots_ = static_cast<std::uint32_t>(last_by_thread_.size());
  }
  return last_by_thread_[slot];
}

void TemporariesTracker::grow_sites(std::uint32_t site) {
  per_site_.resize(std::max<std::size_t>(site + 1, 2 * per_site_.size()));
}

void TemporariesTracker::finish(Analysis& a) {
  // A pool may turn out to be an upstream only after its first blocks: its
  // sites keep their temporaries, the process-wide count leaves them out.
  std::unordered_set<std::uint32_t> upstream_slots;
  for (const PoolStats& p : a.pools)
    if (p.upstream) upstream_slots.insert(p.info.id);
  for (std::size_t i = 0; i < per_site_.size() && i < a.sites.size(); ++i) {
    Site& s = a.sites[i];
    s.temporaries = per_site_[i];
    if (!upstream_slots.contains(Engine::pool_slot(s.pool.value)))
      a.summary.temporary_allocations += s.temporaries;
  }
}

}  // namespace memtrail::detail
