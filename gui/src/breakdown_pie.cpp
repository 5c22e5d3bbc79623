#include "breakdown_pie.hpp"

#include <QChart>
#include <QPieSeries>
#include <QPieSlice>

#include "format.hpp"

namespace memtrail::gui {

PieFigures pieFigures(const PoolBreakdown& pool) {
  PieFigures f;
  f.title = QStringLiteral("%1 (%2%3)")
                .arg(QString::fromStdString(pool.name),
                     QString::fromUtf8(to_string(pool.space).data(),
                                       static_cast<int>(to_string(pool.space).size())),
                     pool.device >= 0 ? QStringLiteral(" %1").arg(pool.device) : QString());
  f.used = pool.used;
  f.cached_free = pool.cached_free;
  f.fragmented = pool.fragmented;
  f.reserved_known = pool.source != PoolBreakdown::Source::none;
  return f;
}

void addToPie(PieFigures& total, const PoolBreakdown& pool) {
  PieFigures f = pieFigures(pool);
  total.reserved_known = total.reserved_known || f.reserved_known;
  total.used += f.used;
  total.cached_free += f.cached_free;
  total.fragmented += f.fragmented;
}

namespace {

void addSlice(QPieSeries* series, const QString& what, std::uint64_t bytes, QColor color) {
  if (bytes == 0) return;
  QPieSlice* slice = series->append(QStringLiteral("%1 %2").arg(what, bytesText(bytes)),
                                    static_cast<qreal>(bytes));
  slice->setColor(color);
  slice->setLabelVisible(true);
}

}  // namespace

QChartView* makeBreakdownPie(const PieFigures& f, QWidget* parent) {
  auto* series = new QPieSeries;
  addSlice(series, QObject::tr("used"), f.used, QColor(0x33, 0x77, 0xcc));
  addSlice(series, QObject::tr("cached free"), f.cached_free, QColor(0x88, 0xcc, 0x88));
  addSlice(series, QObject::tr("fragmented"), f.fragmented, QColor(0xdd, 0x66, 0x44));
  series->setPieSize(0.55);
  auto* chart = new QChart;
  chart->addSeries(series);
  chart->setAnimationOptions(QChart::NoAnimation);  // screenshots and timing: draw at once
  chart->legend()->hide();
  const std::uint64_t reserved = f.used + f.cached_free + f.fragmented;
  chart->setTitle(f.reserved_known
                      ? QObject::tr("%1\nreserved %2").arg(f.title, bytesText(reserved))
                      : QObject::tr("%1\nused %2 (reserved unknown: used only)")
                            .arg(f.title, bytesText(f.used)));
  auto* view = new QChartView(chart, parent);
  view->setRenderHint(QPainter::Antialiasing);
  view->setMinimumSize(300, 240);
  return view;
}

}  // namespace memtrail::gui
