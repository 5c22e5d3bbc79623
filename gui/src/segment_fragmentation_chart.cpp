#include "segment_fragmentation_chart.hpp"

#include <QMouseEvent>
#include <QPainter>
#include <QPolygonF>
#include <algorithm>
#include <cmath>

#include "timeline_axis.hpp"

namespace memtrail::gui {
namespace {
constexpr double kMillionths = 1e6;  // the series' unit: 1.0 = 1'000'000
}

SegmentFragmentationChart::SegmentFragmentationChart(QWidget* parent) : QWidget(parent) {
  setMinimumHeight(120);
}

void SegmentFragmentationChart::setPool(std::shared_ptr<const Session> session, std::uint32_t pool,
                                        std::uint64_t t0, std::uint64_t t1) {
  session_ = std::move(session);
  pool_ = pool;
  t0_ = t0;
  t1_ = std::max(t1, t0 + 1);
  has_series_ = false;
  if (session_) {
    const SeriesId id{SeriesKind::pool_external_fragmentation, PoolId{pool}};
    for (const auto& s : session_->series_list()) has_series_ = has_series_ || s.id == id;
  }
  query();
}

void SegmentFragmentationChart::setMoment(std::optional<std::uint64_t> t) {
  moment_ = t;
  update();
}

void SegmentFragmentationChart::setMomentValue(std::optional<double> external) {
  moment_value_ = external;
  update();
}

std::optional<double> SegmentFragmentationChart::curveValueAt(std::uint64_t t) const {
  const Envelope& e = envelope_;
  if (e.max.empty() || e.step_ns == 0 || t < e.t0) return std::nullopt;
  const std::size_t i = std::min<std::size_t>((t - e.t0) / e.step_ns, e.max.size() - 1);
  if (!e.has_data[i]) return std::nullopt;
  return static_cast<double>(e.max[i]) / kMillionths;
}

QRect SegmentFragmentationChart::plotRect() const {
  const int left = fontMetrics().horizontalAdvance(QStringLiteral("100 %")) + 12;
  const int top = fontMetrics().height() + 6;
  const int bottom = height() - fontMetrics().height() - 8;
  return QRect(left, top, std::max(1, width() - left - 8), std::max(1, bottom - top));
}

QRect SegmentFragmentationChart::percentLabelRect(int percent) const {
  const QRect plot = plotRect();
  const int y = static_cast<int>(std::lround(plot.bottom() + 1 - percent / 100.0 * plot.height()));
  return QRect(0, y - 8, plot.left() - 6, 16);
}

std::vector<std::pair<QRectF, QString>> SegmentFragmentationChart::timeLabels() const {
  const QRect plot = plotRect();
  std::vector<std::pair<QRectF, QString>> labels;
  for (const Tick& t : time_ticks(t0_, t1_, std::max(2, plot.width() / 110))) {
    const double x = plot.left() + static_cast<double>(t.value - t0_) /
                                       static_cast<double>(t1_ - t0_) * plot.width();
    const double w = fontMetrics().horizontalAdvance(t.label) + 4;
    // A label centred near the left edge would run into "0 %": dropped.
    if (x - w / 2 < plot.left() || x + w / 2 > width()) continue;
    labels.emplace_back(QRectF(x - w / 2, plot.bottom() + 3, w, fontMetrics().height()), t.label);
  }
  return labels;
}

std::uint64_t SegmentFragmentationChart::timeAtX(int x) const {
  const QRect plot = plotRect();
  const double f = std::clamp(static_cast<double>(x - plot.left()) / plot.width(), 0.0, 1.0);
  return t0_ + static_cast<std::uint64_t>(std::llround(f * static_cast<double>(t1_ - t0_)));
}

void SegmentFragmentationChart::query() {
  envelope_ = {};
  if (session_ && has_series_)
    envelope_ = session_->series({SeriesKind::pool_external_fragmentation, PoolId{pool_}}, t0_, t1_,
                                 static_cast<std::size_t>(plotRect().width()));
  update();
}

void SegmentFragmentationChart::resizeEvent(QResizeEvent*) {
  query();
}

void SegmentFragmentationChart::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), Qt::white);
  const QRect plot = plotRect();
  p.setPen(Qt::black);
  p.drawText(QRect(plot.left(), 2, plot.width(), fontMetrics().height()), Qt::AlignLeft,
             fontMetrics().elidedText(
                 tr("External fragmentation over time (1 − largest free block / free bytes; "
                    "sampled — the dot: the moment, exact)"),
                 Qt::ElideRight, plot.width()));
  if (!has_series_) {
    p.setPen(QColor(0x66, 0x66, 0x66));
    const PoolStats* pool = session_ ? session_->whole().pool(PoolId{pool_}) : nullptr;
    p.drawText(plot, Qt::AlignCenter,
               pool && pool->has_segments
                   ? tr("No block is placed in this pool's segments: no fragmentation series.")
                   : tr("This pool has no segments: no fragmentation series."));
    return;
  }
  auto y_of = [&](std::uint64_t v) {
    return plot.bottom() + 1 - static_cast<double>(v) / kMillionths * plot.height();
  };
  for (int pct : {0, 50, 100}) {
    const int y = static_cast<int>(std::lround(y_of(static_cast<std::uint64_t>(pct) * 10000)));
    p.setPen(QColor(0xe6, 0xe6, 0xe6));
    p.drawLine(plot.left(), y, plot.right(), y);
    p.setPen(Qt::black);
    p.drawText(percentLabelRect(pct), Qt::AlignRight | Qt::AlignVCenter,
               QStringLiteral("%1 %").arg(pct));
  }
  p.setPen(Qt::black);
  for (const auto& [box, label] : timeLabels()) p.drawText(box, Qt::AlignHCenter, label);
  const Envelope& e = envelope_;
  QPolygonF area;
  area << QPointF(plot.left(), plot.bottom() + 1);
  for (std::size_t i = 0; i < e.max.size(); ++i) {
    const double y = e.has_data[i] ? y_of(e.max[i]) : plot.bottom() + 1;
    area << QPointF(plot.left() + static_cast<double>(i), y)
         << QPointF(plot.left() + static_cast<double>(i + 1), y);
  }
  area << QPointF(plot.left() + static_cast<double>(e.max.size()), plot.bottom() + 1);
  p.setPen(QPen(QColor(0xe1, 0x57, 0x59), 1));
  p.setBrush(QColor(0xe1, 0x57, 0x59, 90));
  p.drawPolygon(area);
  p.setPen(QColor(0xaa, 0xaa, 0xaa));
  p.setBrush(Qt::NoBrush);
  p.drawRect(plot.adjusted(0, 0, -1, -1));
  if (moment_ && *moment_ >= t0_ && *moment_ <= t1_) {
    const double x = plot.left() + static_cast<double>(*moment_ - t0_) /
                                       static_cast<double>(t1_ - t0_) * plot.width();
    p.setPen(QPen(QColor(0xd6, 0x27, 0x28), 2));
    p.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
    if (moment_value_) {
      // The header's figure, exact at the moment (the curve is sampled).
      const double y = y_of(static_cast<std::uint64_t>(std::llround(*moment_value_ * kMillionths)));
      p.setBrush(QColor(0xd6, 0x27, 0x28));
      p.drawEllipse(QPointF(x, y), 4, 4);
      const QString label = QStringLiteral("%1 %").arg(*moment_value_ * 100, 0, 'f', 1);
      const int w = fontMetrics().horizontalAdvance(label) + 6;
      const bool left = x + 8 + w > plot.right();
      const QRectF box(left ? x - 8 - w : x + 8,
                       std::clamp(y - 18, double(plot.top()), double(plot.bottom() - 16)), w,
                       fontMetrics().height());
      p.fillRect(box, QColor(255, 255, 255, 220));
      p.setPen(Qt::black);
      p.drawText(box, Qt::AlignCenter, label);
    }
  }
}

void SegmentFragmentationChart::mousePressEvent(QMouseEvent* e) {
  if (!session_ || !plotRect().contains(e->pos())) return;
  const std::uint64_t t = timeAtX(e->pos().x());
  setMoment(t);
  emit momentClicked(t);
}

}  // namespace memtrail::gui
