// memtrail-gui's command line:
//   memtrail-gui [TRACE] [--view ID] [--screenshot OUT.png] [--size WxH] [--range T0:T1] [--moment
//   T]
// Parsed before QApplication exists (--screenshot picks the offscreen
// platform), so plain C++ and testable without a display.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memtrail::gui {

struct GuiArgs {
  std::string trace;       // .mtr file or `memtrail run` directory; empty: none
  std::string screenshot;  // PNG to write, then exit; empty: interactive
  std::string view;        // tab to show (required with --screenshot)
  std::string compare;     // --compare B: the Compare tab's second trace; empty: none
  int width = 1400, height = 900;
  std::optional<std::uint64_t> range_from, range_to;  // --range T0:T1 (either may be empty)
  std::optional<std::uint64_t> moment;                // --moment T: as a click on the timeline
  std::string policy;  // --policy SPEC: the What-if view's replay (whatif_spec.hpp)
  bool help = false;
};

// nullopt and a one-line *error naming the problem on bad arguments.
std::optional<GuiArgs> parse_gui_args(const std::vector<std::string>& args, std::string* error);

extern const char* const kGuiUsage;

}  // namespace memtrail::gui
