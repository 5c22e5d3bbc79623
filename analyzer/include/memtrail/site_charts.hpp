// Charts over time per top site (heaptrack_gui's Consumed / Allocations /
// Temporary charts): for the top N sites of an Analysis by the chosen cost,
// one series each plus "other" (every other leaf-pool site), over a time
// range in equal buckets.
//
//   memtrail::SiteChartRequest r;  // consumed, top 10, whole trace
//   memtrail::SiteCharts c = session->site_charts(r, session->whole());
//   for (const auto& s : c.series) ... s.value[i] at c.time_ns[i] + c.step_ns
//
// Values, at the end of each bucket (the state after every event before
// time_ns[i] + step_ns, and none after t1):
//   consumed     the site's live bytes (blocks allocated before t0 included),
//                so the last bucket of the whole trace is
//                Site::live_at_range_end.bytes;
//   allocations  its allocations in [t0, bucket end], cumulative: the last
//                bucket is Site::calls of an Analysis of [t0, t1];
//   temporary    its temporary allocations, likewise (Site::temporaries).
// Sites are those of the Analysis passed (Session::whole() or one of
// Session::analyze_range()), ranked as `report` ranks them (consumed by
// peak, allocations by calls, temporary by temporaries), leaf pools only.
//
// Computed by a second pass over the trace (Session::site_charts), with
// memory for the charted series times the buckets plus one byte per
// distinct site: bounded at 10^5 sites and beyond.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "memtrail/analysis.hpp"

namespace memtrail {

enum class ChartCost : std::uint8_t { consumed, allocations, temporary };
const char* chart_cost_name(ChartCost c);  // "consumed", "allocations", "temporary"
bool parse_chart_cost(const std::string& name, ChartCost& out);
// The order `report` ranks sites by for this chart.
SiteOrder chart_site_order(ChartCost c);

struct SiteChartRequest {
  ChartCost cost = ChartCost::consumed;
  std::uint64_t t0 = 0, t1 = kTimeMax;  // inclusive; clamped to the trace
  std::size_t top = 10;                 // at most 250
  std::size_t buckets = 200;
  // Set: these sites of the Analysis passed are charted, in this order (at
  // most 250), instead of the top ones; every other leaf-pool site is in
  // "other". The GUI's filter charts the top sites that match.
  std::optional<std::vector<SiteId>> sites;
};

struct SiteSeries {
  bool other = false;                // every leaf-pool site not charted on its own
  SiteId site{};                     // indexes the Analysis passed (not for `other`)
  std::vector<std::uint64_t> value;  // one per bucket
};

struct SiteCharts {
  ChartCost cost = ChartCost::consumed;
  std::uint64_t t0 = 0, t1 = 0, step_ns = 1;
  std::vector<std::uint64_t> time_ns;  // start of each bucket
  std::vector<SiteSeries> series;      // top sites best first, "other" last
  std::string error;                   // one line; empty on success
};

// {"cost", "t0", "t1", "step_ns", "time_ns": [...], "series": [{"site": index
// or null for other, "name": caller_text() or "other", "pool", "value"}]}.
void write_site_charts_json(const SiteCharts& c, const Analysis& sites, std::ostream& out);

}  // namespace memtrail
