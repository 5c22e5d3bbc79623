// The Compare tab's chart: the used bytes of trace A and trace B over trace
// time (each since its own start), drawn over each other on one time axis
// and one byte axis, in two colours with a legend. The curves are the
// Sessions' process_used envelopes (Session::series): the bucket maxima as a
// line, the minima as a lighter band, as the Timeline tab draws them.
#pragma once

#include <QColor>
#include <QString>
#include <QWidget>
#include <array>
#include <cstdint>

#include "memtrail/session.hpp"

namespace memtrail::gui {

class ChartAxes;  // chart_axes.hpp

struct CompareCurve {
  QString label;  // "A: run-1.mtr (peak 4.00 MiB)"
  QColor colour;
  Envelope envelope;
};

class CompareTimeline : public QWidget {
  Q_OBJECT

 public:
  static const QColor kColourA, kColourB;
  explicit CompareTimeline(QWidget* parent = nullptr);

  // Both curves over [t0, t1] of trace time; an empty envelope is not drawn.
  void setCurves(std::uint64_t t0, std::uint64_t t1, std::array<CompareCurve, 2> curves);
  void clear();
  const std::array<CompareCurve, 2>& curves() const { return curves_; }
  // Every byte value on the axis stays below this (the larger curve's max).
  std::uint64_t axisMax() const { return axis_max_; }

  QSize sizeHint() const override { return {600, 220}; }
  QSize minimumSizeHint() const override { return {300, 140}; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  QRect plotRect() const;
  // The axes over both curves (ChartAxes): no headroom, time grid lines.
  ChartAxes axes(const QRect& plot) const;
  void paintCurve(QPainter& p, const ChartAxes& axes, const CompareCurve& c) const;
  void paintLegend(QPainter& p, const QRect& plot) const;

  std::uint64_t t0_ = 0, t1_ = 0, axis_max_ = 0;
  std::array<CompareCurve, 2> curves_;
  bool empty_ = true;
};

}  // namespace memtrail::gui
