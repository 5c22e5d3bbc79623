// memtrail-gui: open a trace and see it (docs/gui.md).
//   memtrail-gui [TRACE] [--view ID] [--screenshot OUT.png] [--size WxH] [--range T0:T1]
#include <malloc.h>
#include <QApplication>
#include <QTimer>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "compare_view.hpp"
#include "gui_args.hpp"
#include "main_window.hpp"
#include "screenshot.hpp"
#include "timing.hpp"
#include "view_args.hpp"
#include "views.hpp"

namespace {

int fail(const std::string& message) {
  std::fprintf(stderr, "memtrail-gui: %s\n", message.c_str());
  return 2;
}

// MEMTRAIL_GUI_TIMING: marks for the benchmarks, and with =exit a quit once
// every view is ready and the visible one has painted.
void watchTiming(memtrail::gui::MainWindow& window) {
  using memtrail::gui::MainWindow;
  if (!memtrail::gui::timing_enabled()) return;
  QObject::connect(&window, &MainWindow::loadFailed, &window, [](const QString& m) {
    std::fprintf(stderr, "memtrail-gui: %s\n", m.toStdString().c_str());
    if (memtrail::gui::timing_exit()) QApplication::exit(2);
  });
  if (!memtrail::gui::timing_exit()) return;
  auto* poll = new QTimer(&window);
  poll->setInterval(5);
  QObject::connect(poll, &QTimer::timeout, &window, [&window] {
    const std::string painted = window.currentViewId().toStdString() + "-painted";
    if (window.allViewsReady() && memtrail::gui::timing_marked(painted)) QApplication::exit(0);
  });
  QObject::connect(&window, &MainWindow::allReady, poll, qOverload<>(&QTimer::start));
}

// --screenshot promises one line on error: Qt's own notes about the
// platform ("XDG_RUNTIME_DIR not set", "propagateSizeHints") are dropped.
void quietQtMessages(QtMsgType type, const QMessageLogContext&, const QString& message) {
  if (type == QtCriticalMsg || type == QtFatalMsg)
    std::fprintf(stderr, "memtrail-gui: %s\n", message.toLocal8Bit().constData());
}

// The views load in parallel, each on its own worker thread; glibc gives
// each thread an arena that keeps its peak resident after the work moves
// on (101-110 MiB on a 10^5-stack trace; one arena: 98-99 MiB, no slower).
// A user's own MALLOC_ARENA_MAX or GLIBC_TUNABLES wins.
void share_one_malloc_arena() {
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr && std::getenv("GLIBC_TUNABLES") == nullptr)
    mallopt(M_ARENA_MAX, 1);
}

}  // namespace

int main(int argc, char** argv) {
  share_one_malloc_arena();
  memtrail::gui::timing_start();
  std::vector<std::string> raw(argv + 1, argv + argc);
  std::string error;
  auto args = memtrail::gui::parse_gui_args(raw, &error);
  if (!args) return fail(error + " (try 'memtrail-gui --help')");
  if (args->help) {
    std::fputs(memtrail::gui::kGuiUsage, stdout);
    return 0;
  }
  // Headless rendering needs no display unless a platform was asked for.
  if (!args->screenshot.empty() && std::getenv("QT_QPA_PLATFORM") == nullptr)
    setenv("QT_QPA_PLATFORM", "offscreen", 1);
  if (!args->screenshot.empty()) qInstallMessageHandler(quietQtMessages);

  QApplication app(argc, argv);
  QApplication::setOrganizationName("memtrail");
  QApplication::setApplicationName("memtrail-gui");
  memtrail::gui::MainWindow window;
  memtrail::gui::addAllViews(window);
  if (!args->compare.empty())
    memtrail::gui::openCompareIn(window, QString::fromStdString(args->compare));
  memtrail::gui::applyViewArgs(window, *args);
  window.resize(args->width, args->height);

  if (!args->screenshot.empty()) {
    int code = 0;
    memtrail::gui::runScreenshot(window, *args, [&](int c, const std::string& message) {
      code = c;
      if (c != 0) fail(message);
      QTimer::singleShot(0, &app, [c] { QApplication::exit(c); });
    });
    if (code != 0) return code;  // failed before the event loop (unknown view)
    window.show();
    memtrail::gui::timing_mark("window-shown");
    return QApplication::exec();
  }
  if (!args->view.empty() && !window.viewIds().contains(QString::fromStdString(args->view)))
    return fail("unknown view '" + args->view +
                "' (views: " + window.viewIds().join(", ").toStdString() + ")");
  watchTiming(window);
  window.show();
  memtrail::gui::timing_mark("window-shown");
  memtrail::gui::startInteractive(window, *args);
  return QApplication::exec();
}
