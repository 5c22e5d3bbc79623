// `check --max-scope-growth`: a loop whose scope grows per iteration fails,
// with the sites that grow (check.hpp).
#include <cmath>

#include "memtrail/check.hpp"
#include "memtrail/report_text.hpp"
#include "memtrail/size.hpp"

namespace memtrail {

CheckItem check_scope_growth(const Analysis& a, std::uint64_t limit, std::size_t frames_per_site) {
  CheckItem item;
  item.name = "scope-growth";
  const ScopeStats* worst = nullptr;
  long long worst_growth = 0;
  for (const ScopeStats& sc : a.scopes) {
    const long long growth = std::llround(sc.growth_per_entry_bytes);
    if (growth > static_cast<long long>(limit)) {
      item.passed = false;
      item.details += "  scope '" + sc.info.name + "' grows " + std::to_string(growth) +
                      " bytes per iteration over " + std::to_string(sc.entries) + " entries\n";
      for (const GrowthSite& g : sc.growth_sites) {
        item.details += "    +" + std::to_string(std::llround(g.bytes_per_entry)) +
                        " bytes per iteration, allocated from:\n";
        item.details += format_stack(at(a.sites, g.site).frames, frames_per_site, "      ",
                                     StackStyle::numbered);
      }
    }
    if (!worst || growth > worst_growth) {
      worst = &sc;
      worst_growth = growth;
    }
  }
  item.summary = worst ? "largest scope growth " + std::to_string(worst_growth) +
                             " bytes per iteration (scope '" + worst->info.name + "', " +
                             std::to_string(a.scopes.size()) + " scopes)"
                       : std::string("no scopes in the trace");
  item.summary += "; limit " + std::to_string(limit) + " bytes";
  return item;
}

}  // namespace memtrail
