#include "breakdown_pie.hpp"

#include <QChart>
#include <QHBoxLayout>
#include <QLabel>
#include <QPieSeries>
#include <QPieSlice>

#include "format.hpp"

namespace memtrail::gui {

PieFigures pieFigures(const PoolBreakdown& pool, const QString& name) {
  PieFigures f;
  f.title = QStringLiteral("%1 (%2%3)")
                .arg(name,
                     QString::fromUtf8(to_string(pool.space).data(),
                                       static_cast<int>(to_string(pool.space).size())),
                     pool.device >= 0 ? QStringLiteral(" %1").arg(pool.device) : QString());
  f.used = pool.used;
  f.cached_free = pool.cached_free;
  f.fragmented = pool.fragmented;
  f.reserved_known = pool.source != PoolBreakdown::Source::none;
  return f;
}

bool idleAtMoment(const PoolBreakdown& pool) {
  return pool.reserved == 0 && pool.used == 0;
}

void addToPie(PieFigures& total, const PoolBreakdown& pool) {
  PieFigures f = pieFigures(pool, QString());
  total.reserved_known = total.reserved_known || f.reserved_known;
  total.used += f.used;
  total.cached_free += f.cached_free;
  total.fragmented += f.fragmented;
}

namespace {

struct SliceKind {
  const char* what;
  QColor color;
};
const SliceKind kUsed{"used", QColor(0x33, 0x77, 0xcc)};
const SliceKind kCachedFree{"cached free", QColor(0x88, 0xcc, 0x88)};
const SliceKind kFragmented{"fragmented", QColor(0xdd, 0x66, 0x44)};

// Adds a slice and its line of the caption (a coloured square, the bytes).
void addSlice(QPieSeries* series, QStringList& caption, const SliceKind& kind,
              std::uint64_t bytes) {
  if (bytes == 0) return;
  series->append(QObject::tr(kind.what), static_cast<qreal>(bytes))->setColor(kind.color);
  caption << QStringLiteral("<span style=\"color:%1\">&#9632;</span> %2 %3")
                 .arg(kind.color.name(), QObject::tr(kind.what), bytesText(bytes));
}

}  // namespace

QWidget* makeBreakdownPie(const PieFigures& f, QWidget* parent) {
  auto* series = new QPieSeries;
  QStringList caption;
  addSlice(series, caption, kUsed, f.used);
  addSlice(series, caption, kCachedFree, f.cached_free);
  addSlice(series, caption, kFragmented, f.fragmented);
  series->setPieSize(0.9);
  auto* chart = new QChart;
  chart->addSeries(series);
  chart->setAnimationOptions(QChart::NoAnimation);  // screenshots and timing: draw at once
  chart->legend()->hide();                          // the caption says it: labels get cut off
  chart->setMargins(QMargins(0, 0, 0, 0));
  chart->setBackgroundVisible(false);
  auto* view = new QChartView(chart);
  view->setRenderHint(QPainter::Antialiasing);
  view->setMinimumSize(140, 140);

  const std::uint64_t reserved = f.used + f.cached_free + f.fragmented;
  QString head =
      f.reserved_known
          ? QObject::tr("<b>%1</b><br>reserved %2")
                .arg(f.title.toHtmlEscaped(), bytesText(reserved))
          : QObject::tr("<b>%1</b><br>reserved unknown: used only").arg(f.title.toHtmlEscaped());
  auto* text = new QLabel(head + "<br>" + caption.join("<br>"));
  text->setWordWrap(true);
  text->setAlignment(Qt::AlignLeft | Qt::AlignVCenter);
  auto* box = new QWidget(parent);
  auto* layout = new QHBoxLayout(box);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(view, 1);
  layout->addWidget(text, 1);
  return box;
}

}  // namespace memtrail::gui
