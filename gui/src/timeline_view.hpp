// memtrail-gui's Timeline: used bytes per leaf pool as stacked areas,
// reserved per pool, RSS and heap reserved as lines (min/max envelopes from
// Session::series, one bucket per pixel), lifetime bars of the largest
// blocks of the visible range, marks and scope entries.
// Wheel: zoom around the cursor. Drag: pan. Shift+drag or right drag:
// select a range (rangeSelected). Click: pick a moment (momentSelected),
// once the double-click interval passed without a second click. Double
// click: the whole trace (drops the range, rangeSelected over the whole
// trace); the moment stays. Click on a legend entry: hide or show that
// series (the byte axis fits the series shown, in the visible range).
#pragma once

#include <optional>
#include <utility>

#include "memtrail/gui/session_view.hpp"
#include "timeline_model.hpp"
#include "timeline_painter.hpp"

class QTimer;

namespace memtrail::gui {

class TimelineView : public SessionView {
  Q_OBJECT

 public:
  explicit TimelineView(QWidget* parent = nullptr);

  void setSession(std::shared_ptr<const Session> session) override;
  // Shows [t0, t1] with a margin of 5% each side, the range itself highlighted
  // (no highlight for the whole trace).
  void setRange(std::uint64_t t0, std::uint64_t t1, std::shared_ptr<const Analysis> range) override;
  void setMoment(std::uint64_t time_ns) override;
  std::optional<std::uint64_t> moment() const { return overlay_.moment; }
  bool isReady() const override { return model_.session() != nullptr; }

  std::pair<std::uint64_t, std::uint64_t> visibleRange() const { return {v0_, v1_}; }
  // Clamped to the trace; at least kMinSpanNs wide.
  void setVisibleRange(std::uint64_t t0, std::uint64_t t1);
  // factor > 1 zooms in, < 1 out; `time` keeps its place on screen.
  void zoomAt(double factor, std::uint64_t time);
  // Moves the visible range by `ns` (positive: later), stopping at the ends.
  void panBy(std::int64_t ns);

  // Pixel <-> trace time on the plot (widget coordinates).
  std::uint64_t timeAtX(double x) const;
  double xAtTime(std::uint64_t t) const;

  // What is painted now: for tests and the benchmarks.
  const TimelineFrame& frame() const { return frame_; }
  const TimelineLayout& plotLayout() const { return layout_; }
  QRect barRect(std::size_t i) const { return bar_rect(frame_, layout_, i); }
  int barAt(const QPoint& pos) const;  // -1: none
  QString barToolTip(std::size_t i) const;
  // Legend entries: a click on one hides or shows its series (no moment).
  int legendAt(const QPoint& pos) const;  // series index, -1: none
  QRect legendRect(std::size_t i) const;
  void setSeriesHidden(std::size_t i, bool hidden);
  bool seriesHidden(std::size_t i) const;
  // Scope bands: the name, thread and times of the one under the pointer.
  int scopeAt(const QPoint& pos) const { return scope_at(frame_, layout_, pos); }
  QString scopeToolTip(std::size_t i) const;
  // The label drawn in band i ("name #entry"), empty when it has no room.
  QString scopeLabel(std::size_t i) const;

  static constexpr std::uint64_t kMinSpanNs = 1000;
  static constexpr double kWheelFactor = 1.25;  // per wheel notch

 protected:
  void paintEvent(QPaintEvent*) override;
  void resizeEvent(QResizeEvent*) override;
  void wheelEvent(QWheelEvent*) override;
  void mousePressEvent(QMouseEvent*) override;
  void mouseMoveEvent(QMouseEvent*) override;
  void mouseReleaseEvent(QMouseEvent*) override;
  void mouseDoubleClickEvent(QMouseEvent*) override;
  bool event(QEvent*) override;

 private:
  void recompute();
  QString plotToolTip(const QPoint& pos) const;

  TimelineModel model_;
  TimelineFrame frame_;
  TimelineLayout layout_;
  TimelineOverlay overlay_;
  std::uint64_t v0_ = 0, v1_ = 1;
  // Mouse gesture in progress.
  enum class Drag { none, pan, band } drag_ = Drag::none;
  QPoint press_pos_;
  std::uint64_t press_v0_ = 0;
  bool moved_ = false;
  QTimer* click_timer_ = nullptr;  // a click's moment waits for a double click
  std::uint64_t click_time_ = 0;
};

}  // namespace memtrail::gui
