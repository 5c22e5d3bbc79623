// Command-line options that one view takes (--policy for the What-if view),
// applied after addAllViews and before the trace loads.
#pragma once

#include "gui_args.hpp"

namespace memtrail::gui {

class MainWindow;

void applyViewArgs(MainWindow& window, const GuiArgs& args);

}  // namespace memtrail::gui
