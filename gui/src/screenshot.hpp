// --screenshot: load the trace, apply --range, show the view, wait for its
// ready(), grab the window into a PNG. Errors are one line (no dialog).
#pragma once

#include <QPixmap>
#include <functional>
#include <string>

#include "gui_args.hpp"

class QWidget;

namespace memtrail::gui {

class MainWindow;

// `widget` as it will look once the layouts still asked for have run: a
// label whose text changed just before is grabbed at its new height, not
// cut to its old one.
QPixmap grabSettled(QWidget& widget);

// Drives `window` as `args` ask and calls done(exit code, error line) once,
// from the event loop: 0 and "" when the PNG was written.
void runScreenshot(MainWindow& window, const GuiArgs& args,
                   std::function<void(int, const std::string&)> done);

// What interactive start-up does with TRACE, --view and --range.
void startInteractive(MainWindow& window, const GuiArgs& args);

}  // namespace memtrail::gui
