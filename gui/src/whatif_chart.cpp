#include "whatif_chart.hpp"

#include <QPainter>
#include <QPainterPath>
#include <algorithm>

#include "timeline_axis.hpp"

namespace memtrail::gui {

WhatIfChart::WhatIfChart(QWidget* parent) : QWidget(parent) {
  setMinimumHeight(200);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void WhatIfChart::setRange(std::uint64_t t0, std::uint64_t t1) {
  t0_ = t0;
  t1_ = std::max(t1, t0 + 1);
  update();
}

void WhatIfChart::setLines(std::vector<Line> lines) {
  lines_ = std::move(lines);
  update();
}

void WhatIfChart::setEmptyText(const QString& text) {
  empty_text_ = text;
  update();
}

int WhatIfChart::plotWidth() const {
  return std::max(200, plotRect().width());
}

QRect WhatIfChart::plotRect() const {
  const int left = fontMetrics().horizontalAdvance(QStringLiteral("1000 MiB")) + 12;
  const int top = 2 * fontMetrics().height() + 8;  // the legend above
  const int bottom = height() - fontMetrics().height() - 8;
  return QRect(left, top, std::max(1, width() - left - 12), std::max(1, bottom - top));
}

void WhatIfChart::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), Qt::white);
  const QRect plot = plotRect();
  std::uint64_t top = 1;
  for (const Line& l : lines_)
    for (std::size_t i = 0; i < l.max.size(); ++i)
      if (l.has_data[i]) top = std::max(top, l.max[i]);
  top += top / 20;  // headroom: the highest line is not drawn on the frame
  const std::vector<Tick> ticks = byte_ticks(top, std::max(2, plot.height() / 40));
  if (!ticks.empty()) top = std::max(top, ticks.back().value);
  const double span = static_cast<double>(t1_ - t0_);
  auto x_of = [&](double t) {
    return plot.left() + (t - static_cast<double>(t0_)) / span * plot.width();
  };
  auto y_of = [&](std::uint64_t v) {
    return plot.bottom() + 1 - static_cast<double>(v) / static_cast<double>(top) * plot.height();
  };
  for (const Tick& t : ticks) {
    const double y = y_of(t.value);
    p.setPen(QColor(0xe6, 0xe6, 0xe6));
    p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
    p.setPen(Qt::black);
    p.drawText(QRectF(0, y - 8, plot.left() - 6, 16), Qt::AlignRight | Qt::AlignVCenter, t.label);
  }
  for (const Tick& t : time_ticks(t0_, t1_, std::max(2, plot.width() / 110))) {
    const double x = x_of(static_cast<double>(t.value));
    const double w = fontMetrics().horizontalAdvance(t.label) + 4;
    if (x - w / 2 < plot.left() || x + w / 2 > width()) continue;
    p.drawText(QRectF(x - w / 2, plot.bottom() + 3, w, fontMetrics().height()), Qt::AlignHCenter,
               t.label);
  }
  p.setPen(QColor(0xaa, 0xaa, 0xaa));
  p.drawRect(plot.adjusted(0, 0, -1, -1));
  if (lines_.empty()) {
    p.setPen(QColor(0x66, 0x66, 0x66));
    p.drawText(plot, Qt::AlignCenter | Qt::TextWordWrap, empty_text_);
    return;
  }
  // Legend: one swatch and name per line, left to right above the plot.
  int x = plot.left();
  const int y = fontMetrics().height() / 2 + 4;
  for (const Line& l : lines_) {
    p.setPen(QPen(l.colour, std::max(2, l.width)));
    p.drawLine(x, y + 4, x + 18, y + 4);
    p.setPen(Qt::black);
    const int w = fontMetrics().horizontalAdvance(l.name);
    p.drawText(QRect(x + 24, y - 4, w + 4, fontMetrics().height()), Qt::AlignLeft, l.name);
    x += 24 + w + 20;
  }
  p.setRenderHint(QPainter::Antialiasing, false);
  p.setClipRect(plot);
  for (const Line& l : lines_) {
    QPainterPath path;
    bool open = false;
    for (std::size_t i = 0; i < l.max.size(); ++i) {
      if (!l.has_data[i]) {
        open = false;
        continue;
      }
      const double t = static_cast<double>(l.t0) + static_cast<double>(i * l.step_ns);
      const double xa = std::max<double>(x_of(t), plot.left());
      const double xb = std::min<double>(x_of(t + static_cast<double>(l.step_ns)), plot.right());
      const double yv = y_of(l.max[i]);
      if (!open)
        path.moveTo(xa, yv);
      else
        path.lineTo(xa, yv);
      path.lineTo(xb, yv);
      open = true;
    }
    p.setPen(QPen(l.colour, l.width));
    p.setBrush(Qt::NoBrush);
    p.drawPath(path);
  }
}

}  // namespace memtrail::gui
