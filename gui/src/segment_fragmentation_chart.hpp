// A pool's external fragmentation over time (Session series
// pool_external_fragmentation, 1 - largest free / free, one bucket per
// pixel) beneath the segment rows, with the chosen moment drawn. The curve
// is sampled by the analysis pass; at the moment the chart draws the exact
// state the view's header shows (setMomentValue: the same segment map), so
// the two never disagree there. A click picks a moment (momentClicked).
#pragma once

#include <QWidget>
#include <memory>
#include <optional>

#include "memtrail/session.hpp"

namespace memtrail::gui {

class SegmentFragmentationChart : public QWidget {
  Q_OBJECT

 public:
  explicit SegmentFragmentationChart(QWidget* parent = nullptr);

  // The pool's series over [t0, t1]; a null session clears the chart.
  void setPool(std::shared_ptr<const Session> session, std::uint32_t pool, std::uint64_t t0,
               std::uint64_t t1);
  void setMoment(std::optional<std::uint64_t> t);
  // The moment's external fragmentation (0..1) from the view's segment map;
  // nullopt while it is read, or for a pool without segments.
  void setMomentValue(std::optional<double> external);
  std::optional<double> momentValue() const { return moment_value_; }
  // The value the curve draws at time t (its pixel's maximum, 0..1);
  // nullopt where the series holds nothing.
  std::optional<double> curveValueAt(std::uint64_t t) const;

  const Envelope& envelope() const { return envelope_; }  // what is drawn
  QRect plotRect() const;
  // Where the axis labels go: "0 %", "50 %", "100 %" left of the plot, the
  // time ticks beneath it (none reaching left of the plot, where "0 %" is).
  QRect percentLabelRect(int percent) const;
  std::vector<std::pair<QRectF, QString>> timeLabels() const;
  std::uint64_t timeAtX(int x) const;

 signals:
  void momentClicked(std::uint64_t time_ns);

 protected:
  void paintEvent(QPaintEvent*) override;
  void resizeEvent(QResizeEvent*) override;
  void mousePressEvent(QMouseEvent*) override;

 private:
  void query();

  std::shared_ptr<const Session> session_;
  std::uint32_t pool_ = 0;
  bool has_series_ = false;
  std::uint64_t t0_ = 0, t1_ = 1;
  std::optional<std::uint64_t> moment_;
  std::optional<double> moment_value_;
  Envelope envelope_;
};

}  // namespace memtrail::gui
