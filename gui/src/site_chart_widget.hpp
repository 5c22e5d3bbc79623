// The Sites over time view's chart: the top sites' series of a SiteCharts
// (memtrail/site_charts.hpp) stacked, each bucket a step, "other" on top in
// grey; byte axis for consumed, count axis for allocations and temporary.
#pragma once

#include <QColor>
#include <QWidget>

#include "memtrail/site_charts.hpp"

namespace memtrail::gui {

class SiteChartWidget : public QWidget {
  Q_OBJECT

 public:
  explicit SiteChartWidget(QWidget* parent = nullptr);
  // The colour of series i of n (the last is "other").
  static QColor seriesColour(std::size_t i, std::size_t n);
  void setCharts(const SiteCharts* charts);  // null: nothing (the empty text)
  void setEmptyText(const QString& text);

 protected:
  void paintEvent(QPaintEvent*) override;

 private:
  const SiteCharts* charts_ = nullptr;
  QString empty_text_;
};

}  // namespace memtrail::gui
