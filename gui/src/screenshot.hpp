// --screenshot: load the trace, apply --range, show the view, wait for its
// ready(), grab the window into a PNG. Errors are one line (no dialog).
#pragma once

#include <functional>
#include <string>

#include "gui_args.hpp"

namespace memtrail::gui {

class MainWindow;

// Drives `window` as `args` ask and calls done(exit code, error line) once,
// from the event loop: 0 and "" when the PNG was written.
void runScreenshot(MainWindow& window, const GuiArgs& args,
                   std::function<void(int, const std::string&)> done);

// What interactive start-up does with TRACE, --view and --range.
void startInteractive(MainWindow& window, const GuiArgs& args);

}  // namespace memtrail::gui
