// The text report's scope-growth lines (report_text.hpp).
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "memtrail/report_text.hpp"
#include "memtrail/size.hpp"

namespace memtrail {
namespace {

// One growing site of a scope or loop: its bytes per iteration and stack.
std::string growth_site_text(const Analysis& a, const GrowthSite& g, std::size_t stack_depth) {
  char line[512];
  std::snprintf(line, sizeof line,
                "    +%lld bytes per iteration from this site (%s live at the last entry):\n",
                std::llround(g.bytes_per_entry), format_size(g.live_bytes).c_str());
  return line + format_stack(at(a.sites, g.site).frames, stack_depth, "      ");
}

}  // namespace

std::string scope_growth_text(const Analysis& a, std::size_t stack_depth, bool with_loops) {
  std::string out;
  char line[512];
  for (const ScopeStats& sc : a.scopes) {
    const long long growth = std::llround(sc.growth_per_entry_bytes);
    if (growth < 1 || (!with_loops && sc.info.kind == ScopeKind::iteration)) continue;
    std::snprintf(line, sizeof line,
                  "\n  scope '%s' grows %lld bytes per iteration (%s, %" PRIu64 " entries)\n",
                  sc.info.name.c_str(), growth, std::string(to_string(sc.info.kind)).c_str(),
                  sc.entries);
    out += line;
    for (const GrowthSite& g : sc.growth_sites) out += growth_site_text(a, g, stack_depth);
  }
  return out;
}

// Loops come first in a report: for a Python training loop the answer to
// "does a step keep memory?" matters more than the exit-time lists.
std::string loops_text(const Analysis& a, std::size_t stack_depth, std::size_t top) {
  std::string out;
  char line[512];
  for (const ScopeStats& sc : a.scopes) {
    if (sc.info.kind != ScopeKind::iteration) continue;
    if (out.empty())
      out = "\nLOOPS (growth per iteration; check: --iteration-mark NAME --max-scope-growth 0)\n";
    const long long growth = std::llround(sc.growth_per_entry_bytes);
    std::snprintf(line, sizeof line, "  loop '%s': %" PRIu64 " iterations, ", sc.info.name.c_str(),
                  sc.entries);
    out += line;
    if (growth < 1) {
      out += "does not grow (0 bytes per iteration)\n";
      continue;
    }
    std::snprintf(line, sizeof line, "grows %lld bytes per iteration (%s live at the end)\n",
                  growth, format_size(sc.live_bytes_at_end).c_str());
    out += line;
    std::size_t shown = 0;
    for (const GrowthSite& g : sc.growth_sites) {
      if (shown++ >= top) {
        std::snprintf(line, sizeof line, "    ... %zu more growing sites\n",
                      sc.growth_sites.size() - top);
        out += line;
        break;
      }
      out += growth_site_text(a, g, stack_depth);
    }
  }
  return out;
}

}  // namespace memtrail
