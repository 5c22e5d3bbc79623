// The Scopes view's chart, "memory per iteration": for one scope, at each
// scope_end of the range, the bytes that escaped that entry and the scope's
// live bytes, as steps, as the analysis decimated them
// (ScopeStats::escaped_per_entry, live_over_entries).
#pragma once

#include <QWidget>

#include "memtrail/analysis.hpp"

namespace memtrail::gui {

class ScopesChart : public QWidget {
  Q_OBJECT

 public:
  explicit ScopesChart(QWidget* parent = nullptr);
  // Null: nothing to draw (the chart says why).
  void setScope(const ScopeStats* scope, std::uint64_t t0, std::uint64_t t1);

 protected:
  void paintEvent(QPaintEvent*) override;

 private:
  QRect plotRect() const;
  Series escaped_, live_;
  QString name_;
  std::uint64_t t0_ = 0, t1_ = 1;
};

}  // namespace memtrail::gui
