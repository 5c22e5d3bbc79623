#include "compare_timeline.hpp"

#include <QPainter>
#include <QPainterPath>
#include <algorithm>

#include "timeline_axis.hpp"

namespace memtrail::gui {

namespace {
constexpr int kLeft = 70, kRight = 12, kTop = 26, kBottom = 22;
}  // namespace

// Colour-blind safe pair (Okabe–Ito blue and vermilion).
const QColor CompareTimeline::kColourA(0x00, 0x72, 0xb2);
const QColor CompareTimeline::kColourB(0xd5, 0x5e, 0x00);

CompareTimeline::CompareTimeline(QWidget* parent) : QWidget(parent) {}

void CompareTimeline::setCurves(std::uint64_t t0, std::uint64_t t1,
                                std::array<CompareCurve, 2> curves) {
  t0_ = t0;
  t1_ = std::max(t1, t0 + 1);
  curves_ = std::move(curves);
  axis_max_ = 0;
  for (const CompareCurve& c : curves_) axis_max_ = std::max(axis_max_, c.envelope.max_of_all);
  empty_ = false;
  update();
}

void CompareTimeline::clear() {
  curves_ = {};
  axis_max_ = 0;
  empty_ = true;
  update();
}

QRect CompareTimeline::plotRect() const {
  return rect().adjusted(kLeft, kTop, -kRight, -kBottom);
}

void CompareTimeline::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  if (empty_) {
    p.setPen(palette().text().color());
    p.drawText(rect(), Qt::AlignCenter, tr("No second trace to overlay"));
    return;
  }
  const QRect plot = plotRect();
  paintAxes(p, plot);
  p.setRenderHint(QPainter::Antialiasing);
  for (const CompareCurve& c : curves_) paintCurve(p, plot, c);
  p.setRenderHint(QPainter::Antialiasing, false);
  paintLegend(p, plot);
}

void CompareTimeline::paintAxes(QPainter& p, const QRect& plot) const {
  const QFontMetrics fm(font());
  const std::uint64_t top = std::max<std::uint64_t>(axis_max_, 1);
  for (const Tick& t : byte_ticks(top, std::max(2, plot.height() / 40))) {
    const int y = plot.bottom() - static_cast<int>(static_cast<double>(t.value) /
                                                   static_cast<double>(top) * plot.height());
    p.setPen(QColor(0xe6, 0xe6, 0xe6));
    p.drawLine(plot.left(), y, plot.right(), y);
    p.setPen(palette().text().color());
    p.drawText(QRect(0, y - fm.height() / 2, kLeft - 6, fm.height()),
               Qt::AlignRight | Qt::AlignVCenter, t.label);
  }
  for (const Tick& t : time_ticks(t0_, t1_, std::max(2, plot.width() / 110))) {
    const int x = plot.left() + static_cast<int>(static_cast<double>(t.value - t0_) /
                                                 static_cast<double>(t1_ - t0_) * plot.width());
    p.setPen(QColor(0xee, 0xee, 0xee));
    p.drawLine(x, plot.top(), x, plot.bottom());
    p.setPen(palette().text().color());
    const int w = fm.horizontalAdvance(t.label);
    // The first label starts at the axis instead of hanging left of it.
    const int left = std::clamp(x - w / 2, plot.left(), plot.right() - w);
    p.drawText(left, plot.bottom() + fm.ascent() + 4, t.label);
  }
  p.setPen(QColor(0x88, 0x88, 0x88));
  p.drawRect(plot);
}

void CompareTimeline::paintCurve(QPainter& p, const QRect& plot, const CompareCurve& c) const {
  const Envelope& e = c.envelope;
  if (e.time_ns.empty() || axis_max_ == 0) return;
  const double top = static_cast<double>(axis_max_);
  auto xOf = [&](std::uint64_t t) {
    const double f =
        static_cast<double>(std::clamp(t, t0_, t1_) - t0_) / static_cast<double>(t1_ - t0_);
    return plot.left() + f * plot.width();
  };
  auto yOf = [&](std::uint64_t v) {
    return plot.bottom() - static_cast<double>(v) / top * plot.height();
  };
  QPainterPath line;
  QColor band = c.colour;
  band.setAlpha(50);
  bool open = false;
  for (std::size_t i = 0; i < e.time_ns.size(); ++i) {
    if (!e.has_data[i]) {
      open = false;
      continue;
    }
    const double x0 = xOf(e.time_ns[i]), x1 = xOf(e.time_ns[i] + e.step_ns);
    // The bucket's min..max as a band, its max as the line.
    p.fillRect(QRectF(x0, yOf(e.max[i]), std::max(1.0, x1 - x0), yOf(e.min[i]) - yOf(e.max[i])),
               band);
    if (!open) line.moveTo(x0, yOf(e.max[i]));
    line.lineTo(x0, yOf(e.max[i]));
    line.lineTo(x1, yOf(e.max[i]));
    open = true;
  }
  p.setPen(QPen(c.colour, 2));
  p.setBrush(Qt::NoBrush);
  p.drawPath(line);
}

void CompareTimeline::paintLegend(QPainter& p, const QRect& plot) const {
  const QFontMetrics fm(font());
  int x = plot.left();
  for (const CompareCurve& c : curves_) {
    if (c.label.isEmpty()) continue;
    const int y = (kTop - fm.height()) / 2;
    p.fillRect(QRect(x, y + fm.height() / 2 - 2, 18, 4), c.colour);
    p.setPen(palette().text().color());
    p.drawText(x + 24, y + fm.ascent(), c.label);
    x += 24 + fm.horizontalAdvance(c.label) + 24;
  }
}

}  // namespace memtrail::gui
