#include "histogram_chart.hpp"

#include <QPainter>
#include <algorithm>
#include <cmath>

#include "chart_axes.hpp"
#include "format.hpp"

namespace memtrail::gui {

HistogramChart::HistogramChart(Unit unit, QWidget* parent) : QWidget(parent), unit_(unit) {
  setMinimumHeight(150);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void HistogramChart::setHistogram(const Histogram* h) {
  histogram_ = h;
  update();
}

QString HistogramChart::bucketLabel(std::size_t i) const {
  const std::uint64_t low = Histogram::bucket_low(i);
  return unit_ == Unit::bytes ? format_bytes(low) : format_time(low);
}

void HistogramChart::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), Qt::white);
  const QFontMetrics fm = fontMetrics();
  const QRect plot = ChartAxes::plotRect(rect(), fm, QStringLiteral("1,000,000"), 1);
  std::size_t first = 64, last = 0;
  std::uint64_t top = 0;
  if (histogram_)
    for (std::size_t i = 0; i < histogram_->counts.size(); ++i)
      if (histogram_->counts[i]) {
        first = std::min(first, i);
        last = i;
        top = std::max(top, histogram_->counts[i]);
      }
  p.setPen(QColor(0xaa, 0xaa, 0xaa));
  p.drawRect(plot.adjusted(0, 0, -1, -1));
  if (first > last) {
    p.setPen(QColor(0x66, 0x66, 0x66));
    p.drawText(plot, Qt::AlignCenter, tr("No allocation in this range."));
    return;
  }
  // The count axis of ChartAxes; its time axis is not drawn (x is buckets).
  ChartAxesStyle style;
  style.counts = true;
  const ChartAxes axes(plot, 0, 1, top, style);
  for (const Tick& t : count_ticks(axes.top(), std::max(2, plot.height() / 40))) {
    const double y = axes.y(t.value);
    p.setPen(QColor(0xe6, 0xe6, 0xe6));
    p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
    p.setPen(Qt::black);
    p.drawText(QRectF(0, y - fm.height() / 2.0, plot.left() - 6, fm.height()),
               Qt::AlignRight | Qt::AlignVCenter, t.label);
  }
  const std::size_t n = last - first + 1;
  const double slot = static_cast<double>(plot.width()) / static_cast<double>(n);
  // Every `every`-th bucket is labelled, so that labels never overlap.
  int widest = 0;
  for (std::size_t i = first; i <= last; ++i)
    widest = std::max(widest, fm.horizontalAdvance(bucketLabel(i)));
  const auto every = static_cast<std::size_t>(std::max(1.0, std::ceil((widest + 8) / slot)));
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = first + k;
    const double x = plot.left() + slot * static_cast<double>(k);
    const double y = axes.y(histogram_->counts[i]);
    p.fillRect(QRectF(x + slot * 0.1, y, slot * 0.8, plot.bottom() + 1 - y),
               QColor(0x1f, 0x77, 0xb4));
    if (k % every != 0) continue;
    const double w = widest + 8;
    p.setPen(Qt::black);
    p.drawText(QRectF(x + slot / 2 - w / 2, plot.bottom() + 3, w, fm.height()), Qt::AlignHCenter,
               bucketLabel(i));
  }
  p.setPen(QColor(0xaa, 0xaa, 0xaa));
  p.drawRect(plot.adjusted(0, 0, -1, -1));
}

}  // namespace memtrail::gui
