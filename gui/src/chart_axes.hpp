// The axes every time chart of memtrail-gui draws (Compare's timelines, the
// Scopes, What-if and site charts): the plot rectangle under a legend, a
// byte axis on the left with its grid lines, a time axis below, and the
// headroom rule. One place, so the charts scale and label alike.
#pragma once

#include <QColor>
#include <QRect>
#include <cstdint>

#include "timeline_axis.hpp"

class QFontMetrics;
class QPainter;

namespace memtrail::gui {

struct ChartAxesStyle {
  // The axis reaches 5 % above the largest value, rounded up to its last
  // tick, so the highest line is not drawn on the frame.
  bool headroom = true;
  bool time_grid = false;      // vertical grid lines at the time ticks
  int byte_tick_spacing = 40;  // px between byte ticks, at least
  QColor text = Qt::black;
  bool counts = false;  // a count axis ("1,000") instead of bytes
};

// Ticks 0, step, 2*step, ... <= max with a 1-2-5 step, labelled as counts.
std::vector<Tick> count_ticks(std::uint64_t max, int max_ticks);

// The value at the top edge of a plot whose largest drawn value is
// `max_value`: 5 % above it, so the highest line is drawn inside the plot
// and not on its frame, where it cannot be seen (every chart's rule).
std::uint64_t axis_top_with_headroom(std::uint64_t max_value);

class ChartAxes {
 public:
  // Values 0..max_value over [t0, t1] (t1 > t0 enforced) drawn in `plot`.
  ChartAxes(const QRect& plot, std::uint64_t t0, std::uint64_t t1, std::uint64_t max_value,
            const ChartAxesStyle& style = {});

  // The plot rectangle of a widget of rectangle `widget`: room for byte
  // labels as wide as `widest_label` on the left, `legend_lines` of text above
  // and the time labels below.
  static QRect plotRect(const QRect& widget, const QFontMetrics& fm, const QString& widest_label,
                        int legend_lines = 2);

  const QRect& plot() const { return plot_; }
  std::uint64_t top() const { return top_; }  // the value at the plot's top edge
  double x(double t_ns) const;
  double y(std::uint64_t value) const;

  // Grid lines, byte and time labels, and the frame.
  void paint(QPainter& p, const QFontMetrics& fm) const;

 private:
  QRect plot_;
  std::uint64_t t0_, t1_, top_;
  ChartAxesStyle style_;
  std::vector<Tick> byte_ticks_;
};

}  // namespace memtrail::gui
