// The leak counts (Leaks' classes and the leak-site list, each site's
// Site::leaked/direct/indirect/reachable/possible, PoolStats::leaked,
// Summary::leaked: the report's LEAKS, the JSON's leaks, `check`'s leak
// gates, the GUI's Leaks tab and Summary). The Engine decides which blocks
// are left live in the range and their class (its live state and the
// reachability events); this tracker counts them by site, pool and class,
// and sums the process-wide totals over the leaf pools at the end.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "trackers/block_tracker.hpp"

namespace memtrail::detail {

class LeakCountsTracker : public BlockTracker {
 public:
  explicit LeakCountsTracker(const AnalysisOptions& /*o*/) {}

  void pools_grew(std::uint32_t count) { by_pool_.resize(count); }
  void on_leak(std::uint32_t pool_slot, std::uint64_t address, const LiveBlock& b, LeakClass cls);
  void on_unclassed_leak(std::uint32_t pool_slot, const LiveBlock& b, UnclassedLeak why);
  // Into the sites (by the Engine's index, the Analysis' order), the pools
  // (by slot), Analysis::leaks and the summary.
  void finish(Analysis& a);

 private:
  struct SiteLeaks {
    Tally leaked, direct, indirect, reachable, possible;
  };
  struct PoolLeaks {
    Tally leaked;  // direct + indirect
    Leaks classes;
  };

  std::unordered_map<std::uint32_t, SiteLeaks> by_site_;  // by the Engine's site index
  std::vector<PoolLeaks> by_pool_;                        // by the Engine's pool slot
};

}  // namespace memtrail::detail
