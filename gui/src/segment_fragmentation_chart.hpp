// A pool's external fragmentation over time (Session series
// pool_external_fragmentation, 1 - largest free / free, one bucket per
// pixel) beneath the segment rows, with the chosen moment drawn. A click
// picks a moment (momentClicked).
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

  const Envelope& envelope() const { return envelope_; }  // what is drawn
  QRect plotRect() const;
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
  Envelope envelope_;
};

}  // namespace memtrail::gui
