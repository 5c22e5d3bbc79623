// The leak counts by site, pool and class, and their totals (leak_counts.hpp).
#include "trackers/leak_counts.hpp"

#include <unordered_set>

#include "engine.hpp"
#include "leak_sites.hpp"

namespace memtrail::detail {

void LeakCountsTracker::on_leak(std::uint32_t pool_slot, std::uint64_t /*address*/,
                                const LiveBlock& b, LeakClass cls) {
  SiteLeaks& site = by_site_[b.site];
  PoolLeaks& pool = by_pool_[pool_slot];
  if (cls == LeakClass::reachable) {
    site.reachable.add(b.size);
    pool.classes.reachable.add(b.size);
    return;
  }
  if (cls == LeakClass::possible) {
    site.possible.add(b.size);
    pool.classes.possible.add(b.size);
    return;
  }
  if (cls == LeakClass::indirect) {
    site.indirect.add(b.size);
    pool.classes.indirect.add(b.size);
  } else {
    site.direct.add(b.size);
    pool.classes.direct.add(b.size);
  }
  site.leaked.add(b.size);
  pool.leaked.add(b.size);
}

void LeakCountsTracker::on_unclassed_leak(std::uint32_t pool_slot, const LiveBlock& b,
                                          UnclassedLeak why) {
  Leaks& classes = by_pool_[pool_slot].classes;
  (why == UnclassedLeak::runtime ? classes.runtime : classes.exec_replaced).add(b.size);
}

void LeakCountsTracker::finish(Analysis& a) {
  for (const auto& [index, leaks] : by_site_) {
    if (index >= a.sites.size()) continue;
    Site& s = a.sites[index];
    s.leaked = leaks.leaked;
    s.direct = leaks.direct;
    s.indirect = leaks.indirect;
    s.reachable = leaks.reachable;
    s.possible = leaks.possible;
  }
  // An upstream's live blocks are the segments of the pools above it: its
  // sites and PoolStats show them, the process-wide totals do not.
  std::unordered_set<std::uint32_t> upstream_slots;
  Leaks& totals = a.leaks;
  for (PoolStats& p : a.pools) {
    if (p.info.id >= by_pool_.size()) continue;
    const PoolLeaks& pool = by_pool_[p.info.id];
    p.leaked = pool.leaked;
    if (p.upstream) {
      upstream_slots.insert(p.info.id);
      continue;
    }
    totals.direct += pool.classes.direct;
    totals.indirect += pool.classes.indirect;
    totals.reachable += pool.classes.reachable;
    totals.possible += pool.classes.possible;
    totals.runtime += pool.classes.runtime;
    totals.exec_replaced += pool.classes.exec_replaced;
  }
  a.summary.leaked = totals.direct + totals.indirect;
  totals.sites = leak_sites_of(a.sites, [&](PoolId pool) {
    return pool.value < Engine::kMaxPools && upstream_slots.contains(pool.value);
  });
}

}  // namespace memtrail::detail
