// The scopes' per-entry figures and growth (scopes.hpp).
#include "trackers/scopes.hpp"

#include <algorithm>

namespace memtrail::detail {

ScopeGrowthTracker::Growth& ScopeGrowthTracker::growth_of(std::uint32_t scope) {
  if (scope == kIterationScopeId) {
    if (iteration_.empty()) iteration_.emplace_back(timeline_points_);
    return iteration_.front();
  }
  while (scope >= by_scope_.size()) by_scope_.emplace_back(timeline_points_);
  return by_scope_[scope];
}

void ScopeGrowthTracker::on_scope_entry_end(std::uint32_t scope, std::uint32_t entry,
                                            std::uint64_t entries, std::uint64_t time_ns) {
  Growth& g = growth_of(scope);
  const std::uint64_t escaped = entry_live(entry);
  g.bytes_escaped += escaped;
  g.max_escaped_per_entry = std::max(g.max_escaped_per_entry, escaped);
  const double x = static_cast<double>(entries), y = static_cast<double>(g.live);
  g.n += 1;
  g.sx += x;
  g.sy += y;
  g.sxx += x * x;
  g.sxy += x * y;
  std::uint64_t values[2] = {escaped, g.live};
  g.per_entry.record(time_ns, values);
}

void ScopeGrowthTracker::on_range_end() {
  for (Growth& g : by_scope_) g.live_at_range_end = g.live;
  for (Growth& g : iteration_) g.live_at_range_end = g.live;
}

void ScopeGrowthTracker::finish(Analysis& a) {
  for (std::size_t i = 0; i < moved_out_.size() && i < a.scopes.size(); ++i) {
    const std::uint32_t scope = moved_out_[i];
    const bool known = scope == kIterationScopeId ? !iteration_.empty() : scope < by_scope_.size();
    if (!known) continue;  // no block in any of its entries: every figure 0
    Growth& g = growth_of(scope);
    ScopeStats& out = a.scopes[i];
    out.bytes_escaped = g.bytes_escaped;
    out.max_escaped_per_entry = g.max_escaped_per_entry;
    out.live_bytes_at_end = g.live_at_range_end;
    out.growth_sites = g.site_growth.growing(out.entries, 10);
    if (g.n >= 2) {
      const double den = g.n * g.sxx - g.sx * g.sx;
      if (den > 0) out.growth_per_entry_bytes = (g.n * g.sxy - g.sx * g.sy) / den;
    }
    out.escaped_per_entry = g.per_entry.series(0);
    out.live_over_entries = g.per_entry.series(1);
  }
}

}  // namespace memtrail::detail
