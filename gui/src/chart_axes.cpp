#include "chart_axes.hpp"

#include <QFontMetrics>
#include <QPainter>
#include <algorithm>
#include <cmath>

#include "format.hpp"

namespace memtrail::gui {

std::vector<Tick> count_ticks(std::uint64_t max, int max_ticks) {
  const double raw = static_cast<double>(std::max<std::uint64_t>(max, 1)) / std::max(1, max_ticks);
  const auto step = static_cast<std::uint64_t>(std::max(1.0, std::ceil(nice_step(raw))));
  std::vector<Tick> out;
  for (std::uint64_t v = 0; v <= max; v += step) out.push_back(Tick{v, countText(v)});
  return out;
}

std::uint64_t axis_top_with_headroom(std::uint64_t max_value) {
  const std::uint64_t top = std::max<std::uint64_t>(max_value, 1);
  return top + top / 20;
}

ChartAxes::ChartAxes(const QRect& plot, std::uint64_t t0, std::uint64_t t1, std::uint64_t max_value,
                     const ChartAxesStyle& style)
    : plot_(plot),
      t0_(t0),
      t1_(std::max(t1, t0 + 1)),
      top_(style.headroom ? axis_top_with_headroom(max_value)
                          : std::max<std::uint64_t>(max_value, 1)),
      style_(style) {
  const int n = std::max(2, plot.height() / std::max(1, style.byte_tick_spacing));
  byte_ticks_ = style.counts ? count_ticks(top_, n) : byte_ticks(top_, n);
  if (style.headroom && !byte_ticks_.empty()) top_ = std::max(top_, byte_ticks_.back().value);
}

QRect ChartAxes::plotRect(const QRect& widget, const QFontMetrics& fm, const QString& widest_label,
                          int legend_lines) {
  const int left = widget.left() + fm.horizontalAdvance(widest_label) + 12;
  const int top = widget.top() + legend_lines * fm.height() + 8;
  const int bottom = widget.bottom() + 1 - fm.height() - 8;
  return QRect(left, top, std::max(1, widget.right() + 1 - left - 12), std::max(1, bottom - top));
}

double ChartAxes::x(double t_ns) const {
  const double span = static_cast<double>(t1_ - t0_);
  return plot_.left() + (t_ns - static_cast<double>(t0_)) / span * plot_.width();
}

double ChartAxes::y(std::uint64_t value) const {
  return plot_.bottom() + 1 -
         static_cast<double>(value) / static_cast<double>(top_) * plot_.height();
}

void ChartAxes::paint(QPainter& p, const QFontMetrics& fm) const {
  for (const Tick& t : byte_ticks_) {
    const double yv = y(t.value);
    p.setPen(QColor(0xe6, 0xe6, 0xe6));
    p.drawLine(QPointF(plot_.left(), yv), QPointF(plot_.right(), yv));
    p.setPen(style_.text);
    p.drawText(QRectF(0, yv - fm.height() / 2.0, plot_.left() - 6, fm.height()),
               Qt::AlignRight | Qt::AlignVCenter, t.label);
  }
  for (const Tick& t : time_ticks(t0_, t1_, std::max(2, plot_.width() / 110))) {
    const double xv = x(static_cast<double>(t.value));
    if (style_.time_grid) {
      p.setPen(QColor(0xee, 0xee, 0xee));
      p.drawLine(QPointF(xv, plot_.top()), QPointF(xv, plot_.bottom()));
    }
    p.setPen(style_.text);
    const int w = fm.horizontalAdvance(t.label) + 4;
    // The first label starts at the axis instead of hanging left of it.
    const double left = std::clamp(xv - w / 2.0, double(plot_.left()), double(plot_.right() - w));
    p.drawText(QRectF(left, plot_.bottom() + 3, w, fm.height()), Qt::AlignHCenter, t.label);
  }
  p.setPen(QColor(0xaa, 0xaa, 0xaa));
  p.setBrush(Qt::NoBrush);
  p.drawRect(plot_.adjusted(0, 0, -1, -1));
}

}  // namespace memtrail::gui
