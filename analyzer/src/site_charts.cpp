// Names of the chart costs and the site charts' JSON (memtrail/site_charts.hpp).
#include "memtrail/site_charts.hpp"

#include <nlohmann/json.hpp>

#include "memtrail/site_caller.hpp"

namespace memtrail {

const char* chart_cost_name(ChartCost c) {
  switch (c) {
    case ChartCost::consumed:
      return "consumed";
    case ChartCost::allocations:
      return "allocations";
    case ChartCost::temporary:
      return "temporary";
  }
  return "?";
}

bool parse_chart_cost(const std::string& name, ChartCost& out) {
  for (ChartCost c : {ChartCost::consumed, ChartCost::allocations, ChartCost::temporary})
    if (name == chart_cost_name(c)) {
      out = c;
      return true;
    }
  return false;
}

SiteOrder chart_site_order(ChartCost c) {
  switch (c) {
    case ChartCost::consumed:
      return SiteOrder::peak;
    case ChartCost::allocations:
      return SiteOrder::calls;
    case ChartCost::temporary:
      return SiteOrder::temporaries;
  }
  return SiteOrder::peak;
}

void write_site_charts_json(const SiteCharts& c, const Analysis& a, std::ostream& out) {
  nlohmann::ordered_json j;
  j["cost"] = chart_cost_name(c.cost);
  j["t0"] = c.t0;
  j["t1"] = c.t1;
  j["step_ns"] = c.step_ns;
  j["time_ns"] = c.time_ns;
  nlohmann::ordered_json series = nlohmann::ordered_json::array();
  for (const SiteSeries& s : c.series) {
    nlohmann::ordered_json e;
    if (s.other) {
      e["site"] = nullptr;
      e["name"] = "other";
    } else {
      const Site& site = at(a.sites, s.site);
      e["site"] = s.site.value;
      e["name"] = caller_text(site.frames);  // as report's one-line site lists name it
      const PoolStats* pool = a.pool(site.pool);
      e["pool"] = pool ? pool->info.name : std::string();
    }
    e["value"] = s.value;
    series.push_back(std::move(e));
  }
  j["series"] = std::move(series);
  out << j.dump() << "\n";
}

}  // namespace memtrail
