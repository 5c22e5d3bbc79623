#include "whatif_chart.hpp"

#include <QPainter>
#include <QPainterPath>
#include <algorithm>

#include "chart_axes.hpp"

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
  return ChartAxes::plotRect(rect(), fontMetrics(),
                             QStringLiteral("1000 MiB"));  // legend above
}

void WhatIfChart::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), Qt::white);
  const QRect plot = plotRect();
  std::uint64_t top = 1;
  for (const Line& l : lines_)
    for (std::size_t i = 0; i < l.max.size(); ++i)
      if (l.has_data[i]) top = std::max(top, l.max[i]);
  const ChartAxes axes(plot, t0_, t1_, top);  // with headroom
  axes.paint(p, fontMetrics());
  auto x_of = [&](double t) { return axes.x(t); };
  auto y_of = [&](std::uint64_t v) { return axes.y(v); };
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
