// The scopes' per-entry figures and growth (ScopeStats: bytes_escaped,
// max_escaped_per_entry, growth_per_entry_bytes, growth_sites, the
// escaped_per_entry and live_over_entries series, live_bytes_at_end: the
// report's SCOPES and scope growth, the JSON's scopes, `check
// --max-scope-growth`, the GUI's Scopes tab). The Engine keeps the scopes'
// structure (their open entries per thread, which entry a block was
// allocated in, the entries counted); this tracker hears each block's bytes
// entering or leaving an entry and each entry's end.
#pragma once

#include <cstdint>
#include <vector>

#include "decimator.hpp"
#include "scope_growth.hpp"
#include "trackers/block_tracker.hpp"

namespace memtrail::detail {

class ScopeGrowthTracker : public BlockTracker {
 public:
  explicit ScopeGrowthTracker(const AnalysisOptions& o) : timeline_points_(o.timeline_points) {}

  void on_scope_bytes(std::uint32_t scope, std::uint32_t entry, bool once, std::int64_t delta,
                      std::uint32_t site, std::uint64_t entries) {
    entry_live(entry) += static_cast<std::uint64_t>(delta);
    if (!once) return;
    Growth& g = growth_of(scope);
    g.live += static_cast<std::uint64_t>(delta);
    g.site_growth.change(site, delta, entries);
  }
  void on_scope_entry_end(std::uint32_t scope, std::uint32_t entry, std::uint64_t entries,
                          std::uint64_t time_ns);
  void on_range_end();
  void on_scope_out(std::uint32_t scope) { moved_out_.push_back(scope); }
  // Into Analysis::scopes, in the order the Engine moved them out.
  void finish(Analysis& a);

 private:
  struct Growth {
    explicit Growth(std::size_t points) : per_entry(2, points) {}
    std::uint64_t live = 0;  // bytes allocated inside any entry, still live
    std::uint64_t live_at_range_end = 0;
    std::uint64_t bytes_escaped = 0, max_escaped_per_entry = 0;
    // Least-squares sums over (entry number, live at its end).
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    Decimator per_entry;          // escaped bytes of the entry, scope live bytes
    ScopeSiteGrowth site_growth;  // which sites the live bytes grow at
  };
  Growth& growth_of(std::uint32_t scope);
  std::uint64_t& entry_live(std::uint32_t entry) {
    if (entry >= entry_live_.size())
      entry_live_.resize(std::max<std::size_t>(entry + 1, 2 * entry_live_.size()), 0);
    return entry_live_[entry];
  }

  std::size_t timeline_points_;
  std::vector<Growth> by_scope_;   // index = scope id
  std::vector<Growth> iteration_;  // the iteration scope of marks: 0 or 1
  std::vector<std::uint64_t>
      entry_live_;                        // per entry (the Engine's instance): its bytes still live
  std::vector<std::uint32_t> moved_out_;  // scope ids, in Analysis::scopes' order
};

}  // namespace memtrail::detail
