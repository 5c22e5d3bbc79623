#include "compare_timeline.hpp"

#include <QPainter>
#include <QPainterPath>
#include <algorithm>

#include "chart_axes.hpp"

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
  const ChartAxes scale = axes(plot);
  scale.paint(p, QFontMetrics(font()));
  p.setRenderHint(QPainter::Antialiasing);
  for (const CompareCurve& c : curves_) paintCurve(p, scale, c);
  p.setRenderHint(QPainter::Antialiasing, false);
  paintLegend(p, plot);
}

ChartAxes CompareTimeline::axes(const QRect& plot) const {
  ChartAxesStyle style;
  style.headroom = false;
  style.time_grid = true;
  style.text = palette().text().color();
  return ChartAxes(plot, t0_, t1_, axis_max_, style);
}

void CompareTimeline::paintCurve(QPainter& p, const ChartAxes& axes, const CompareCurve& c) const {
  const Envelope& e = c.envelope;
  if (e.time_ns.empty() || axis_max_ == 0) return;
  auto xOf = [&](std::uint64_t t) { return axes.x(static_cast<double>(std::clamp(t, t0_, t1_))); };
  auto yOf = [&](std::uint64_t v) { return axes.y(v); };
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
