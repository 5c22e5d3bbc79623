#include "histogram_view.hpp"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "format.hpp"
#include "histogram_chart.hpp"
#include "timeline_axis.hpp"

namespace memtrail::gui {

namespace {
constexpr int kBucketRole = Qt::UserRole + 1;
}

HistogramView::HistogramView(QWidget* parent) : SessionView(parent) {
  auto* layout = new QVBoxLayout(this);
  heading_ = new QLabel(tr("No trace loaded"), this);
  heading_->setWordWrap(true);
  layout->addWidget(heading_);
  auto* columns = new QHBoxLayout;
  const QString titles[2] = {tr("Allocation sizes"), tr("Lifetimes of freed blocks")};
  const QString sums[2] = {tr("Bytes"), tr("Total lifetime")};
  for (int i = 0; i < 2; ++i) {
    auto* column = new QVBoxLayout;
    column->addWidget(new QLabel(QStringLiteral("<b>%1</b>").arg(titles[i]), this));
    charts_[i] =
        new HistogramChart(i == 0 ? HistogramChart::Unit::bytes : HistogramChart::Unit::time, this);
    column->addWidget(charts_[i], 3);
    tables_[i] = new QTreeWidget(this);
    tables_[i]->setRootIsDecorated(false);
    tables_[i]->setHeaderLabels({tr("From"), tr("To"), tr("Count"), sums[i]});
    tables_[i]->header()->setStretchLastSection(false);
    column->addWidget(tables_[i], 2);
    columns->addLayout(column, 1);
  }
  layout->addLayout(columns, 1);
}

void HistogramView::setSession(std::shared_ptr<const Session> session) {
  analysis_.reset();
  for (int i = 0; i < 2; ++i) {
    charts_[i]->setHistogram(nullptr);
    tables_[i]->clear();
  }
  heading_->setText(session ? tr("Loading...") : tr("No trace loaded"));
}

void HistogramView::setRange(std::uint64_t t0, std::uint64_t t1,
                             std::shared_ptr<const Analysis> range) {
  analysis_ = std::move(range);
  if (!analysis_) return;
  heading_->setText(tr("Allocations of %1 – %2 (leaf pools), in power-of-two buckets")
                        .arg(format_moment(t0), format_moment(t1)));
  fill(0, analysis_->size_histogram);
  fill(1, analysis_->lifetime_histogram);
  emit ready();
}

void HistogramView::fill(int histogram, const Histogram& h) {
  charts_[histogram]->setHistogram(&h);
  QTreeWidget* table = tables_[histogram];
  table->clear();
  auto text = [histogram](std::uint64_t v) {
    return histogram == 0 ? format_bytes(v) : format_time(v);
  };
  for (std::size_t i = 0; i < h.counts.size(); ++i) {
    if (!h.counts[i]) continue;
    auto* row = new QTreeWidgetItem(table);
    row->setData(0, kBucketRole, static_cast<qulonglong>(i));
    row->setText(0, text(Histogram::bucket_low(i)));
    row->setText(1, i == 63 ? QStringLiteral("∞") : text(std::uint64_t{1} << (i + 1)));
    row->setText(2, countText(h.counts[i]));
    row->setText(3, histogram == 0 ? bytesText(h.sums[i]) : durationText(h.sums[i]));
    for (int c = 2; c < 4; ++c) row->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
  }
  for (int c = 0; c < 4; ++c) table->resizeColumnToContents(c);
}

int HistogramView::rowCount(int histogram) const {
  return tables_[histogram]->topLevelItemCount();
}

QString HistogramView::cell(int histogram, int row, int column) const {
  const QTreeWidgetItem* item = tables_[histogram]->topLevelItem(row);
  return item ? item->text(column) : QString();
}

std::size_t HistogramView::bucketOf(int histogram, int row) const {
  const QTreeWidgetItem* item = tables_[histogram]->topLevelItem(row);
  return item ? item->data(0, kBucketRole).toULongLong() : 0;
}

QString HistogramView::heading() const {
  return heading_->text();
}

}  // namespace memtrail::gui
