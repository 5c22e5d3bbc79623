// One log2 histogram of an Analysis (size_histogram or lifetime_histogram)
// as bars of counts, one per bucket from the first to the last non-empty
// one, labelled with the buckets' lower bounds (every k-th one where the
// bars are too narrow for every label).
#pragma once

#include <QWidget>

#include "memtrail/analysis.hpp"

namespace memtrail::gui {

class HistogramChart : public QWidget {
  Q_OBJECT

 public:
  enum class Unit { bytes, time };
  explicit HistogramChart(Unit unit, QWidget* parent = nullptr);
  void setHistogram(const Histogram* h);  // null or empty: the empty text
  // The label of bucket i's lower bound ("64 B", "1.02 µs").
  QString bucketLabel(std::size_t i) const;

 protected:
  void paintEvent(QPaintEvent*) override;

 private:
  Unit unit_;
  const Histogram* histogram_ = nullptr;
};

}  // namespace memtrail::gui
