#include "screenshot.hpp"

#include <QCoreApplication>
#include <QEvent>
#include <QImage>
#include <QPixmap>
#include <QTimer>
#include <algorithm>
#include <memory>

#include "main_window.hpp"
#include "memtrail/analysis.hpp"

namespace memtrail::gui {

namespace {

// After loaded(): apply --range (the views get the range's Analysis) and
// --moment (as a click on the timeline would).
void applyArgsRange(MainWindow& window, const GuiArgs& args) {
  if (args.range_from || args.range_to)
    window.applyRange(args.range_from.value_or(0), args.range_to.value_or(kTimeMax));
  if (args.moment) window.applyMoment(*args.moment);
}

}  // namespace

QPixmap grabSettled(QWidget& widget) {
  // A layout run can ask for another (a word-wrapped label that grew moves
  // its neighbours); a few rounds settle any real window.
  for (int round = 0; round < 4; ++round)
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
  return widget.grab();
}

void startInteractive(MainWindow& window, const GuiArgs& args) {
  if (!args.view.empty()) window.showView(QString::fromStdString(args.view));
  if (args.trace.empty()) return;
  QObject::connect(&window, &MainWindow::loaded, &window,
                   [&window, args] { applyArgsRange(window, args); });
  window.openPath(QString::fromStdString(args.trace));
}

void runScreenshot(MainWindow& window, const GuiArgs& args,
                   std::function<void(int, const std::string&)> done) {
  auto finish = std::make_shared<std::function<void(int, const std::string&)>>(std::move(done));
  auto once = [finish](int code, const std::string& error) {
    if (!*finish) return;
    auto f = std::move(*finish);
    *finish = nullptr;
    f(code, error);
  };
  const QString id = QString::fromStdString(args.view);
  if (!window.showView(id))
    return once(2, "unknown view '" + args.view +
                       "' (views: " + window.viewIds().join(", ").toStdString() + ")");
  window.setErrorDialogs(false);
  window.setRememberRecent(false);
  struct State {
    bool range_in_place = false;  // the views hold --range's Analysis
    bool loaded = false;          // --range and --moment were applied
    bool grabbing = false;
  };
  auto state = std::make_shared<State>();
  state->range_in_place = !args.range_from && !args.range_to;
  SessionView* view = window.view(id);
  auto shoot = [&window, view, state, args, once] {
    if (!state->loaded || !state->range_in_place || !view->isReady() || state->grabbing) return;
    state->grabbing = true;
    // One more turn of the event loop: layouts settle and charts draw.
    QTimer::singleShot(50, &window, [&window, args, once] {
      QPixmap shot = grabSettled(window);
      if (!shot.save(QString::fromStdString(args.screenshot), "PNG"))
        return once(2, "cannot write '" + args.screenshot + "'");
      once(0, "");
    });
  };
  QObject::connect(view, &SessionView::ready, &window, shoot);
  QObject::connect(
      &window, &MainWindow::rangeApplied, &window,
      [&window, state, args, shoot](std::uint64_t t0, std::uint64_t t1) {
        const Summary& whole = window.session()->whole().summary;
        std::uint64_t want0 = std::max(args.range_from.value_or(0), whole.first_event_ns);
        std::uint64_t want1 = std::min(args.range_to.value_or(kTimeMax), whole.last_event_ns);
        if (want1 < want0) want1 = want0;
        if (t0 == want0 && t1 == want1) state->range_in_place = true;
        shoot();
      });
  QObject::connect(&window, &MainWindow::loadFailed, &window,
                   [once](const QString& message) { once(2, message.toStdString()); });
  QObject::connect(&window, &MainWindow::loaded, &window, [&window, args, state, shoot] {
    applyArgsRange(window, args);
    state->loaded = true;
    shoot();
  });
  window.openPath(QString::fromStdString(args.trace));
}

}  // namespace memtrail::gui
