// memtrail-gui's "Sites over time" tab (heaptrack_gui's Consumed,
// Allocations and Temporary charts): for the window's range, the top 10 sites
// of the range's Analysis by the chosen cost, one stacked series each plus
// "other", computed off the GUI thread by Session::site_charts (a second
// pass over the file, run while the tab is shown; nothing is computed
// here), with a legend table that
// names each site and its value at the end of the range. A filter box by
// function, file or module (memtrail/site_filter.hpp, SiteFilter::search_box) charts the top sites
// that match instead; "other" then holds every other site, matching or not.
#pragma once

#include <memory>

#include "background.hpp"
#include "memtrail/gui/session_view.hpp"
#include "memtrail/site_charts.hpp"

class QComboBox;
class QLabel;
class QLineEdit;
class QTreeWidget;

namespace memtrail::gui {

class SiteChartWidget;

class SiteChartsView : public SessionView {
  Q_OBJECT

 public:
  static constexpr std::size_t kTopSites = 10;
  static constexpr std::size_t kBuckets = 200;

  explicit SiteChartsView(QWidget* parent = nullptr);

  void setSession(std::shared_ptr<const Session> session) override;
  void setRange(std::uint64_t t0, std::uint64_t t1, std::shared_ptr<const Analysis> range) override;
  // Nothing pending: the charts read the file again, so they are computed
  // only while the tab is shown (as What-if's replay).
  bool isReady() const override { return !session_ || !pending_; }

  void setCost(ChartCost cost);  // recomputes (when shown)
  ChartCost cost() const { return cost_; }
  void setFilter(const QString& text);  // recomputes (when shown)
  QLineEdit* filter() const { return filter_; }
  // For tests: what the chart draws (null until ready) and the legend.
  const SiteCharts* charts() const { return charts_.get(); }
  const Analysis* analysis() const { return range_.get(); }
  int legendRows() const;
  QString legendCell(int row, int column) const;  // 0: site, 1: pool, 2: value at end
  QString heading() const;

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void recomputeWhenShown();
  void compute();
  void showCharts(std::shared_ptr<const SiteCharts> charts);
  std::vector<SiteId> matchingTopSites() const;

  std::shared_ptr<const Session> session_;
  std::shared_ptr<const Analysis> range_;
  std::shared_ptr<const SiteCharts> charts_;
  std::uint64_t t0_ = 0, t1_ = 0;
  ChartCost cost_ = ChartCost::consumed;
  QString filtered_;      // the filter the charts are (being) computed for
  bool pending_ = false;  // a computation runs
  bool stale_ = false;    // the range or cost changed since the last one
  QLabel* heading_;
  QComboBox* cost_box_;
  QLineEdit* filter_;
  SiteChartWidget* chart_;
  QTreeWidget* legend_;
  BackgroundTasks tasks_;
};

}  // namespace memtrail::gui
