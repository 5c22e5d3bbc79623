// The contract between memtrail-gui's main window and its views. Each view
// draws what the analyzer Session answers (no analysis here) for the range
// and moment the user picked in any view.
#pragma once

#include <QStringList>
#include <QWidget>
#include <cstdint>
#include <memory>

#include "memtrail/session.hpp"

namespace memtrail::gui {

class SessionView : public QWidget {
  Q_OBJECT

 public:
  using QWidget::QWidget;

  // On the GUI thread, once a load finished (null: clear the view). The view
  // shows the whole trace until setRange is called.
  virtual void setSession(std::shared_ptr<const Session> session) = 0;
  // The range every view filters to; [first event, last event] = whole trace.
  // `range` is the Analysis of that range (Session::analyze_range, computed
  // once by the main window off the GUI thread; whole() for the full range).
  virtual void setRange(std::uint64_t t0, std::uint64_t t1,
                        std::shared_ptr<const Analysis> range) = 0;
  // A chosen moment (a click on the timeline); views showing a state at one
  // moment (fragmentation, OOM explainer, summary pies) follow it.
  virtual void setMoment(std::uint64_t /*time_ns*/) {}
  // The window's moment is the range's peak of used bytes (at load, after
  // "Go to peak used", or when a new range leaves the chosen moment out):
  // views that show a moment say "peak used" rather than "chosen".
  virtual void setPeakMoment(std::uint64_t time_ns) { setMoment(time_ns); }
  // Whether the view holds everything it needs to paint the current
  // session and range (emits ready() when that becomes true).
  virtual bool isReady() const = 0;
  // A view with sub-tabs names them ("flame" of the Compare tab): the
  // window's view "ID-PART" (--view compare-flame) shows one.
  virtual QStringList parts() const { return {}; }
  virtual void showPart(const QString& /*part*/) {}

 signals:
  // The user selected a range (rubber band, a row's lifetime) or a moment.
  void rangeSelected(std::uint64_t t0, std::uint64_t t1);
  void momentSelected(std::uint64_t time_ns);
  // Data for the current session and range is in place (for --screenshot,
  // MEMTRAIL_GUI_TIMING and tests).
  void ready();
};

}  // namespace memtrail::gui
