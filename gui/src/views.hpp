// The one place where memtrail-gui's views are registered (id, tab title),
// in tab order. --screenshot --view ID and MEMTRAIL_GUI_TIMING use the ids.
#pragma once

namespace memtrail::gui {

class MainWindow;

void addAllViews(MainWindow& window);

}  // namespace memtrail::gui
