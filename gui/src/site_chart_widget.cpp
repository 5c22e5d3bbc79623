#include "site_chart_widget.hpp"

#include <QPainter>
#include <QPainterPath>
#include <algorithm>

#include "chart_axes.hpp"

namespace memtrail::gui {

SiteChartWidget::SiteChartWidget(QWidget* parent) : QWidget(parent) {
  setMinimumHeight(200);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

QColor SiteChartWidget::seriesColour(std::size_t i, std::size_t n) {
  // Tableau 10: told apart at a glance; "other" is grey.
  static const QColor kColours[] = {{0x1f, 0x77, 0xb4}, {0xff, 0x7f, 0x0e}, {0x2c, 0xa0, 0x2c},
                                    {0xd6, 0x27, 0x28}, {0x94, 0x67, 0xbd}, {0x8c, 0x56, 0x4b},
                                    {0xe3, 0x77, 0xc2}, {0xbc, 0xbd, 0x22}, {0x17, 0xbe, 0xcf},
                                    {0x7f, 0x7f, 0x7f}};
  if (i + 1 == n) return QColor(0xc7, 0xc7, 0xc7);
  return kColours[i % std::size(kColours)];
}

void SiteChartWidget::setCharts(const SiteCharts* charts) {
  charts_ = charts;
  update();
}

void SiteChartWidget::setEmptyText(const QString& text) {
  empty_text_ = text;
  update();
}

void SiteChartWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), Qt::white);
  const QFontMetrics fm = fontMetrics();
  const QRect plot = ChartAxes::plotRect(rect(), fm, QStringLiteral("1,000,000,000"), 1);
  if (!charts_ || charts_->series.empty() || charts_->time_ns.empty()) {
    ChartAxes(plot, 0, 1, 1).paint(p, fm);
    p.setPen(QColor(0x66, 0x66, 0x66));
    p.drawText(plot, Qt::AlignCenter | Qt::TextWordWrap, empty_text_);
    return;
  }
  const SiteCharts& c = *charts_;
  const std::size_t buckets = c.time_ns.size();
  // Stacked: the running sum below each series, per bucket.
  std::vector<std::uint64_t> below(buckets, 0);
  std::uint64_t top = 0;
  for (std::size_t b = 0; b < buckets; ++b) {
    std::uint64_t sum = 0;
    for (const SiteSeries& s : c.series) sum += s.value[b];
    top = std::max(top, sum);
  }
  ChartAxesStyle style;
  style.counts = c.cost != ChartCost::consumed;
  const ChartAxes axes(plot, c.t0, c.t1 + 1, top, style);
  axes.paint(p, fm);
  p.setClipRect(plot);
  for (std::size_t k = 0; k < c.series.size(); ++k) {
    const std::vector<std::uint64_t>& v = c.series[k].value;
    QPainterPath upper;
    for (std::size_t b = 0; b < buckets; ++b) {
      const double x0 = axes.x(static_cast<double>(c.time_ns[b]));
      const double x1 = axes.x(static_cast<double>(c.time_ns[b] + c.step_ns));
      const double y = axes.y(below[b] + v[b]);
      if (b == 0)
        upper.moveTo(x0, y);
      else
        upper.lineTo(x0, y);
      upper.lineTo(x1, y);
    }
    // The area: along the top edge, back along the series below.
    QPainterPath area = upper;
    for (std::size_t b = buckets; b-- > 0;) {
      const double y = axes.y(below[b]);
      area.lineTo(axes.x(static_cast<double>(c.time_ns[b] + c.step_ns)), y);
      area.lineTo(axes.x(static_cast<double>(c.time_ns[b])), y);
    }
    area.closeSubpath();
    const QColor colour = seriesColour(k, c.series.size());
    p.fillPath(area, colour);
    p.setPen(QPen(colour.darker(130), 1));
    p.drawPath(upper);
    for (std::size_t b = 0; b < buckets; ++b) below[b] += v[b];
  }
}

}  // namespace memtrail::gui
