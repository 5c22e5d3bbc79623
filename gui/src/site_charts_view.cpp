#include "site_charts_view.hpp"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "format.hpp"
#include "memtrail/site_caller.hpp"
#include "memtrail/site_filter.hpp"
#include "site_chart_widget.hpp"
#include "timeline_axis.hpp"

namespace memtrail::gui {

namespace {

QString valueText(ChartCost cost, std::uint64_t v) {
  return cost == ChartCost::consumed ? bytesText(v) : countText(v);
}

QString costTitle(ChartCost cost) {
  switch (cost) {
    case ChartCost::consumed:
      return QObject::tr("Consumed (live bytes)");
    case ChartCost::allocations:
      return QObject::tr("Allocations (cumulative)");
    case ChartCost::temporary:
      return QObject::tr("Temporary allocations (cumulative)");
  }
  return {};
}

// As report's site lists name a site (caller_text), with the function that
// called it: sites of one allocating helper differ by their callers.
// What the sites are ranked by (as report's top lists).
QString rankText(ChartCost cost) {
  switch (cost) {
    case ChartCost::consumed:
      return QObject::tr("peak contribution");
    case ChartCost::allocations:
      return QObject::tr("allocations");
    case ChartCost::temporary:
      return QObject::tr("temporary allocations");
  }
  return {};
}

QString siteName(const Analysis& a, const SiteSeries& s) {
  if (s.other) return QObject::tr("other sites");
  const FrameList& frames = at(a.sites, s.site).frames;
  QString name = QString::fromStdString(caller_text(frames));
  const std::size_t next = first_caller_frame(frames) + 1;
  if (next < frames.size() && !frames[next].function.empty())
    name += QStringLiteral("  ← ") + QString::fromStdString(frames[next].function);
  return name;
}

QString stackText(const Analysis& a, const SiteSeries& s) {
  if (s.other) return {};
  QStringList lines;
  for (const Frame& f : at(a.sites, s.site).frames) lines << QString::fromStdString(f.describe());
  return lines.join(QLatin1Char('\n'));
}

}  // namespace

SiteChartsView::SiteChartsView(QWidget* parent) : SessionView(parent) {
  auto* layout = new QVBoxLayout(this);
  auto* top = new QHBoxLayout;
  heading_ = new QLabel(tr("No trace loaded"), this);
  heading_->setWordWrap(true);
  top->addWidget(heading_, 1);
  cost_box_ = new QComboBox(this);
  for (ChartCost c : {ChartCost::consumed, ChartCost::allocations, ChartCost::temporary})
    cost_box_->addItem(costTitle(c), static_cast<int>(c));
  cost_box_->setToolTip(tr("What each site's series shows over time"));
  // Not a Tab stop: a focused combo box takes Ctrl+Tab as text to search,
  // and the tab switch lands focus on the first Tab stop.
  cost_box_->setFocusPolicy(Qt::ClickFocus);
  top->addWidget(cost_box_);
  layout->addLayout(top);
  filter_ = new QLineEdit(this);
  filter_->setPlaceholderText(tr("Filter by function, file or module"));
  filter_->setClearButtonEnabled(true);
  layout->addWidget(filter_);
  auto* split = new QSplitter(Qt::Vertical, this);
  chart_ = new SiteChartWidget(split);
  legend_ = new QTreeWidget(split);
  legend_->setRootIsDecorated(false);
  legend_->setHeaderLabels({tr("Site"), tr("Pool"), tr("At the end")});
  legend_->header()->setSectionResizeMode(0, QHeaderView::Stretch);
  legend_->header()->setStretchLastSection(false);
  split->addWidget(chart_);
  split->addWidget(legend_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  layout->addWidget(split, 1);
  connect(cost_box_, &QComboBox::currentIndexChanged, this,
          [this](int i) { setCost(static_cast<ChartCost>(cost_box_->itemData(i).toInt())); });
  connect(filter_, &QLineEdit::textChanged, this, &SiteChartsView::setFilter);
}

void SiteChartsView::setFilter(const QString& text) {
  if (filter_->text() != text) filter_->setText(text);  // comes back here through textChanged
  if (text == filtered_) return;
  filtered_ = text;
  recomputeWhenShown();
}

// The first kTopSites of the report's ranking for the cost that match.
std::vector<SiteId> SiteChartsView::matchingTopSites() const {
  std::vector<SiteId> out;
  const SiteFilter filter = SiteFilter::search_box(filtered_.toStdString());
  for (SiteId id : top_sites(*range_, chart_site_order(cost_), 0)) {
    if (out.size() >= kTopSites) break;
    if (filter.matches(at(range_->sites, id))) out.push_back(id);
  }
  return out;
}

void SiteChartsView::setSession(std::shared_ptr<const Session> session) {
  tasks_.cancel();
  pending_ = false;
  stale_ = false;
  session_ = std::move(session);
  range_.reset();
  showCharts(nullptr);
  heading_->setText(session_ ? tr("Loading...") : tr("No trace loaded"));
}

void SiteChartsView::setRange(std::uint64_t t0, std::uint64_t t1,
                              std::shared_ptr<const Analysis> range) {
  range_ = std::move(range);
  t0_ = t0;
  t1_ = t1;
  recomputeWhenShown();
}

void SiteChartsView::setCost(ChartCost cost) {
  if (cost == cost_) return;
  cost_ = cost;
  cost_box_->setCurrentIndex(static_cast<int>(cost));  // its signal comes back: no-op
  recomputeWhenShown();
}

void SiteChartsView::showEvent(QShowEvent* event) {
  SessionView::showEvent(event);
  if (stale_) compute();
}

void SiteChartsView::recomputeWhenShown() {
  tasks_.cancel();
  pending_ = false;
  stale_ = true;
  showCharts(nullptr);
  if (session_ && range_)
    heading_->setText(tr("The top sites are charted when this tab is shown."));
  if (isVisible()) compute();
}

void SiteChartsView::compute() {
  tasks_.cancel();
  if (!session_ || !range_) return;
  stale_ = false;
  pending_ = true;
  showCharts(nullptr);
  heading_->setText(tr("Charting the top sites (reading the trace again)..."));
  SiteChartRequest request;
  request.cost = cost_;
  request.t0 = t0_;
  request.t1 = t1_;
  request.top = kTopSites;
  request.buckets = kBuckets;
  if (!filtered_.isEmpty()) request.sites = matchingTopSites();
  auto session = session_;
  auto range = range_;
  tasks_.run<std::shared_ptr<const SiteCharts>>(
      [session, range, request](const BackgroundTasks::Wanted& wanted) {
        return std::make_shared<const SiteCharts>(session->site_charts(
            request, *range, [wanted](const LoadProgress&) { return wanted(); }));
      },
      [this](std::shared_ptr<const SiteCharts> charts) {
        pending_ = false;
        showCharts(std::move(charts));
        emit ready();
      });
}

void SiteChartsView::showCharts(std::shared_ptr<const SiteCharts> charts) {
  charts_ = std::move(charts);
  legend_->clear();
  chart_->setCharts(charts_ && charts_->error.empty() ? charts_.get() : nullptr);
  if (!charts_) {
    chart_->setEmptyText(QString());
    return;
  }
  if (!charts_->error.empty()) {
    heading_->setText(tr("Cannot chart the sites: %1").arg(QString::fromStdString(charts_->error)));
    return;
  }
  const std::size_t n = charts_->series.size();
  heading_->setText(
      tr("%1 of the top %2 sites by %3, %4 – %5")
          .arg(costTitle(cost_))
          .arg(n - 1)
          .arg(rankText(cost_))
          .arg(format_moment(charts_->t0), format_moment(charts_->t1)) +
      (filtered_.isEmpty()
           ? QString()
           : tr(" whose stack matches '%1' (other: every other site)").arg(filtered_)));
  chart_->setEmptyText(n > 1 ? QString()
                       : filtered_.isEmpty()
                           ? tr("No site has a value for this cost in the range.")
                           : tr("No site with a value matches '%1'.").arg(filtered_));
  for (std::size_t i = 0; i < n; ++i) {
    const SiteSeries& s = charts_->series[i];
    auto* row = new QTreeWidgetItem(legend_);
    row->setText(0, siteName(*range_, s));
    row->setToolTip(0, stackText(*range_, s));
    if (!s.other) {
      const PoolStats* pool = range_->pool(at(range_->sites, s.site).pool);
      row->setText(1, pool ? QString::fromStdString(pool->info.name) : QString());
    }
    row->setText(2, valueText(cost_, s.value.empty() ? 0 : s.value.back()));
    row->setTextAlignment(2, Qt::AlignRight | Qt::AlignVCenter);
    row->setData(0, Qt::DecorationRole, SiteChartWidget::seriesColour(i, n));
  }
  legend_->resizeColumnToContents(1);
  legend_->resizeColumnToContents(2);
}

int SiteChartsView::legendRows() const {
  return legend_->topLevelItemCount();
}

QString SiteChartsView::legendCell(int row, int column) const {
  const QTreeWidgetItem* item = legend_->topLevelItem(row);
  return item ? item->text(column) : QString();
}

QString SiteChartsView::heading() const {
  return heading_->text();
}

}  // namespace memtrail::gui
