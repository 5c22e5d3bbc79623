#include "gui_args.hpp"

#include <cstdlib>

#include "memtrail/duration.hpp"
#include "whatif_spec.hpp"

namespace memtrail::gui {

const char* const kGuiUsage =
    "usage: memtrail-gui [TRACE] [--view ID] [--screenshot OUT.png] [--size WxH] [--range T0:T1]\n"
    "                    [--moment T] [--compare B] [--policy SPEC]\n"
    "  TRACE              a .mtr trace or a `memtrail run` directory\n"
    "  --view ID          the tab to show: summary, timeline, leaks, tree, flame, callee,\n"
    "                     sites, histogram, fragmentation, scopes, whatif, compare,\n"
    "                     processes;\n"
    "                     a part of a tab: compare-sites, compare-flame (the differential\n"
    "                     flame graph)\n"
    "  --screenshot FILE  render the view offscreen into a PNG and exit (needs TRACE, --view)\n"
    "  --size WxH         window size (default 1400x900)\n"
    "  --range T0:T1      show only [T0, T1] (ns, or with ns/us/ms/s suffix; either may be "
    "empty)\n"
    "  --moment T         the moment the summary's pies and the fragmentation view show, as a\n"
    "                     click on the timeline (default: the peak)\n"
    "  --compare B        a second trace (or run directory) for the Compare tab: TRACE -> B\n"
    "  --policy SPEC      the What-if view replays at load: ALLOCATOR[;pool=NAME][;conf=STR]\n"
    "                     [;capacity=SIZE][;mark=NAME], ALLOCATOR caching, bfc, malloc or\n"
    "                     workspace, fields as `memtrail replay`'s options\n";

namespace {

bool parse_size_arg(const std::string& text, GuiArgs& out, std::string* error) {
  auto x = text.find('x');
  char* end = nullptr;
  long w = x == std::string::npos ? 0 : std::strtol(text.c_str(), &end, 10);
  bool ok = x != std::string::npos && end == text.c_str() + x;
  long h = ok ? std::strtol(text.c_str() + x + 1, &end, 10) : 0;
  ok = ok && *end == '\0' && w >= 200 && h >= 150 && w <= 16384 && h <= 16384;
  if (!ok) {
    *error = "--size '" + text + "': expected WxH, each 200x150 to 16384x16384";
    return false;
  }
  out.width = static_cast<int>(w);
  out.height = static_cast<int>(h);
  return true;
}

bool parse_range_arg(const std::string& text, GuiArgs& out, std::string* error) {
  auto colon = text.find(':');
  if (colon == std::string::npos) {
    *error = "--range '" + text + "': expected T0:T1";
    return false;
  }
  std::string why;
  auto part = [&](const std::string& s, std::optional<std::uint64_t>& v) {
    if (s.empty()) return true;
    v = parse_duration_ns(s, &why);
    return v.has_value();
  };
  if (!part(text.substr(0, colon), out.range_from) || !part(text.substr(colon + 1), out.range_to)) {
    *error = "--range " + why;
    return false;
  }
  if (out.range_from && out.range_to && *out.range_to < *out.range_from) {
    *error = "--range '" + text + "': T1 is before T0";
    return false;
  }
  return true;
}

}  // namespace

std::optional<GuiArgs> parse_gui_args(const std::vector<std::string>& args, std::string* error) {
  GuiArgs out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string& v) {
      if (i + 1 >= args.size()) {
        *error = a + " needs a value";
        return false;
      }
      v = args[++i];
      return true;
    };
    std::string v;
    if (a == "-h" || a == "--help") {
      out.help = true;
    } else if (a == "--screenshot" || a == "--view" || a == "--compare") {
      if (!value(a == "--view" ? out.view : a == "--compare" ? out.compare : out.screenshot))
        return std::nullopt;
    } else if (a == "--size") {
      if (!value(v) || !parse_size_arg(v, out, error)) return std::nullopt;
    } else if (a == "--moment") {
      if (!value(v)) return std::nullopt;
      std::string why;
      out.moment = parse_duration_ns(v, &why);
      if (!out.moment) {
        *error = "--moment '" + v + "': " + why;
        return std::nullopt;
      }
    } else if (a == "--policy") {
      if (!value(out.policy)) return std::nullopt;
      if (!parse_what_if_spec(out.policy, &v)) {
        *error = "--policy '" + out.policy + "': " + v;
        return std::nullopt;
      }
    } else if (a == "--range") {
      if (!value(v) || !parse_range_arg(v, out, error)) return std::nullopt;
    } else if (a.size() > 1 && a[0] == '-') {
      *error = "unknown option '" + a + "'";
      return std::nullopt;
    } else if (!out.trace.empty()) {
      *error = "more than one TRACE ('" + out.trace + "', '" + a + "')";
      return std::nullopt;
    } else {
      out.trace = a;
    }
  }
  if (!out.screenshot.empty() && (out.trace.empty() || out.view.empty())) {
    *error = out.trace.empty() ? "--screenshot needs a TRACE" : "--screenshot needs --view";
    return std::nullopt;
  }
  return out;
}

}  // namespace memtrail::gui
