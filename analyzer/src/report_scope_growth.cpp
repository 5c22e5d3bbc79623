// The text report's scope-growth lines (report_text.hpp).
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "memtrail/report_text.hpp"
#include "memtrail/size.hpp"

namespace memtrail {

std::string scope_growth_text(const Analysis& a, std::size_t stack_depth) {
  std::string out;
  char line[512];
  for (const ScopeStats& sc : a.scopes) {
    const long long growth = std::llround(sc.growth_per_entry_bytes);
    if (growth < 1) continue;
    std::snprintf(line, sizeof line,
                  "\n  scope '%s' grows %lld bytes per iteration (%s, %" PRIu64 " entries)\n",
                  sc.info.name.c_str(), growth, std::string(to_string(sc.info.kind)).c_str(),
                  sc.entries);
    out += line;
    for (const GrowthSite& g : sc.growth_sites) {
      std::snprintf(line, sizeof line,
                    "    +%lld bytes per iteration from this site (%s live at the last entry):\n",
                    std::llround(g.bytes_per_entry), format_size(g.live_bytes).c_str());
      out += line;
      out += format_stack(at(a.sites, g.site).frames, stack_depth, "      ");
    }
  }
  return out;
}

}  // namespace memtrail
