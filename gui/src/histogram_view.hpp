// memtrail-gui's Histograms tab: `memtrail report`'s size and lifetime
// histograms (Analysis::size_histogram, lifetime_histogram; log2 buckets,
// leaf pools) for the window's range, as bars and as tables of each
// non-empty bucket's range, count and sum (bytes, or total lifetime).
#pragma once

#include <memory>

#include "memtrail/gui/session_view.hpp"

class QLabel;
class QTreeWidget;

namespace memtrail::gui {

class HistogramChart;

class HistogramView : public SessionView {
  Q_OBJECT

 public:
  explicit HistogramView(QWidget* parent = nullptr);

  void setSession(std::shared_ptr<const Session> session) override;
  void setRange(std::uint64_t t0, std::uint64_t t1, std::shared_ptr<const Analysis> range) override;
  bool isReady() const override { return true; }  // the Analysis holds everything

  // For tests: 0 = sizes, 1 = lifetimes. Columns: from, to, count, sum.
  int rowCount(int histogram) const;
  QString cell(int histogram, int row, int column) const;
  // The bucket index of a row.
  std::size_t bucketOf(int histogram, int row) const;
  QString heading() const;

 private:
  void fill(int histogram, const Histogram& h);

  std::shared_ptr<const Analysis> analysis_;
  QLabel* heading_;
  HistogramChart* charts_[2];
  QTreeWidget* tables_[2];
};

}  // namespace memtrail::gui
