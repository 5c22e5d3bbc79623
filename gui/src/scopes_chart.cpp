#include "scopes_chart.hpp"

#include <QPainter>
#include <QPainterPath>
#include <algorithm>

#include "chart_axes.hpp"

namespace memtrail::gui {

namespace {
const QColor kEscaped(0xd6, 0x27, 0x28), kLive(0x1f, 0x77, 0xb4);
}

ScopesChart::ScopesChart(QWidget* parent) : QWidget(parent) {
  setMinimumHeight(160);
}

void ScopesChart::setScope(const ScopeStats* scope, std::uint64_t t0, std::uint64_t t1) {
  escaped_ = scope ? scope->escaped_per_entry : Series{};
  live_ = scope ? scope->live_over_entries : Series{};
  name_ = scope ? QString::fromStdString(scope->info.name) : QString();
  // The entries' own span (within the range), so that iterations of a loop
  // that ran for a moment of a long trace are told apart.
  std::uint64_t first = t1, last = t0;
  for (const Series* s : {&escaped_, &live_})
    for (std::uint64_t t : s->time_ns) {
      first = std::min(first, t);
      last = std::max(last, t);
    }
  if (first <= last) {
    const std::uint64_t pad = (last - first) / 20 + 1;
    t0 = std::max(t0, first > pad ? first - pad : 0);
    t1 = std::min(t1, last + pad);
  }
  t0_ = t0;
  t1_ = std::max(t1, t0 + 1);
  update();
}

QRect ScopesChart::plotRect() const {
  return ChartAxes::plotRect(rect(), fontMetrics(), QStringLiteral("1000 KiB"));
}

void ScopesChart::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), Qt::white);
  const QRect plot = plotRect();
  p.setPen(QColor(0xaa, 0xaa, 0xaa));
  p.drawRect(plot.adjusted(0, 0, -1, -1));
  if (escaped_.time_ns.empty() && live_.time_ns.empty()) {
    p.setPen(QColor(0x66, 0x66, 0x66));
    p.drawText(plot, Qt::AlignCenter,
               name_.isEmpty() ? tr("Select a scope to see its memory per iteration.")
                               : tr("Scope '%1' ended no entry in this range.").arg(name_));
    return;
  }
  std::uint64_t top = 1;
  for (const Series* s : {&escaped_, &live_})
    for (std::uint64_t v : s->value) top = std::max(top, v);
  ChartAxesStyle style;
  style.byte_tick_spacing = 36;
  const ChartAxes axes(plot, t0_, t1_, top, style);
  axes.paint(p, fontMetrics());
  auto x_of = [&](std::uint64_t t) { return axes.x(static_cast<double>(t)); };
  auto y_of = [&](std::uint64_t v) { return axes.y(v); };
  // Legend.
  const int ly = fontMetrics().height() / 2 + 4;
  const QString live = tr("'%1' live bytes (allocated inside, still live)").arg(name_);
  const QString escaped = tr("bytes escaped per entry");
  p.setPen(QPen(kLive, 2));
  p.drawLine(plot.left(), ly + 4, plot.left() + 18, ly + 4);
  p.setPen(Qt::black);
  const int lw = fontMetrics().horizontalAdvance(live);
  p.drawText(QRect(plot.left() + 24, ly - 4, lw + 4, fontMetrics().height()), Qt::AlignLeft, live);
  const int ex = plot.left() + 24 + lw + 24;
  p.setPen(QPen(kEscaped, 2));
  p.drawLine(ex, ly + 4, ex + 18, ly + 4);
  p.setPen(Qt::black);
  p.drawText(
      QRect(ex + 24, ly - 4, fontMetrics().horizontalAdvance(escaped) + 4, fontMetrics().height()),
      Qt::AlignLeft, escaped);
  p.setClipRect(plot);
  // Both series hold their value until the next point (the analysis keeps
  // one per time bucket, not one per entry): steps.
  for (const auto& [series, colour] : {std::pair{&escaped_, kEscaped}, std::pair{&live_, kLive}}) {
    QPainterPath path;
    for (std::size_t i = 0; i < series->time_ns.size(); ++i) {
      const QPointF pt(x_of(series->time_ns[i]), y_of(series->value[i]));
      if (i == 0) {
        path.moveTo(pt);
      } else {
        path.lineTo(pt.x(), path.currentPosition().y());
        path.lineTo(pt);
      }
    }
    p.setPen(QPen(colour, 2));
    p.setBrush(Qt::NoBrush);
    p.drawPath(path);
  }
}

}  // namespace memtrail::gui
