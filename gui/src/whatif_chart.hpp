// The What-if view's chart: the pool's recorded reserved and used bytes (the
// Session's series) and the replayed reserved bytes (whatif_run.hpp) over the
// window's range, as steps of each bucket's maximum, with a legend.
#pragma once

#include <QColor>
#include <QString>
#include <QWidget>
#include <cstdint>
#include <vector>

namespace memtrail::gui {

class WhatIfChart : public QWidget {
  Q_OBJECT

 public:
  struct Line {
    QString name;
    QColor colour;
    int width = 1;
    std::uint64_t t0 = 0, step_ns = 1;
    std::vector<std::uint64_t> max;
    std::vector<std::uint8_t> has_data;
  };

  explicit WhatIfChart(QWidget* parent = nullptr);
  void setRange(std::uint64_t t0, std::uint64_t t1);
  void setLines(std::vector<Line> lines);
  // An empty chart says why.
  void setEmptyText(const QString& text);
  // The width the plot has for buckets (the points to ask for).
  int plotWidth() const;
  const std::vector<Line>& lines() const { return lines_; }

 protected:
  void paintEvent(QPaintEvent*) override;

 private:
  QRect plotRect() const;
  std::uint64_t t0_ = 0, t1_ = 1;
  std::vector<Line> lines_;
  QString empty_text_;
};

}  // namespace memtrail::gui
