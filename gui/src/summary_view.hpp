// Summary tab: the key numbers of the range (duration, peak used and when,
// leaks by class, runtime blocks, temporaries, allocations, the run's
// processes) and pies of reserved bytes per pool and per device at one
// moment: the peak of the range by default, or the moment chosen in another
// view.
#pragma once

#include <QMap>
#include <optional>
#include <vector>

#include "background.hpp"
#include "breakdown_pie.hpp"
#include "memtrail/gui/session_view.hpp"
#include "memtrail/run_index.hpp"

class QGridLayout;
class QLabel;

namespace memtrail::gui {

class SummaryView : public SessionView {
  Q_OBJECT

 public:
  explicit SummaryView(QWidget* parent = nullptr);

  void setSession(std::shared_ptr<const Session> session) override;
  void setRange(std::uint64_t t0, std::uint64_t t1, std::shared_ptr<const Analysis> range) override;
  void setMoment(std::uint64_t time_ns) override;
  void setPeakMoment(std::uint64_t time_ns) override;
  bool isReady() const override { return ready_; }
  void setRun(const std::optional<RunIndex>& run);

  // For tests: the value shown for a key number ("leaked-direct", ...;
  // keys() lists them) and the pies' titles.
  QString value(const QString& key) const;
  QStringList keys() const;
  QStringList pieTitles() const;
  // The figures of the pies shown, in pieTitles()' order.
  const std::vector<PieFigures>& pies() const { return shown_pies_; }
  // Pools left out of the pies: nothing reserved or used at the moment.
  QStringList idlePools() const { return idle_pools_; }
  std::uint64_t moment() const { return moment_; }
  QString momentText() const;

 private:
  void showNumbers();
  void requestBreakdown();
  void showPies(const std::vector<PoolBreakdown>& pools);
  void setValue(const QString& key, const QString& label, const QString& value);

  BackgroundTasks tasks_;
  std::shared_ptr<const Session> session_;
  std::shared_ptr<const Analysis> range_;
  std::optional<RunIndex> run_;
  std::uint64_t moment_ = 0;
  bool moment_chosen_ = false;
  bool ready_ = false;
  QLabel* heading_ = nullptr;
  QGridLayout* numbers_ = nullptr;
  QMap<QString, QLabel*> values_;
  QStringList keys_;
  QLabel* moment_label_ = nullptr;
  QGridLayout* pies_ = nullptr;
  QWidget* pie_area_ = nullptr;
  QStringList pie_titles_;
  std::vector<PieFigures> shown_pies_;
  QStringList idle_pools_;  // pools with nothing reserved or used at the moment
  QLabel* idle_label_ = nullptr;
};

}  // namespace memtrail::gui
