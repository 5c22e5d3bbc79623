// memtrail-gui's Fragmentation tab: for a pool and a moment, each segment as
// a row of spans coloured by state (Session::segment_map + segment_spans,
// computed off the GUI thread, stale answers dropped); a click on a span
// shows its size and stack; beneath, the pool's external fragmentation over
// the range (a click picks the moment); beside, the OOM explainer.
#pragma once

#include <optional>

#include "memtrail/gui/session_view.hpp"
#include "segment_rows.hpp"

class QComboBox;
class QLabel;
class QTextBrowser;

namespace memtrail::gui {

class OomExplainer;
class SegmentFragmentationChart;
class SegmentWorker;

class FragmentationView : public SessionView {
  Q_OBJECT

 public:
  explicit FragmentationView(QWidget* parent = nullptr);

  void setSession(std::shared_ptr<const Session> session) override;
  void setRange(std::uint64_t t0, std::uint64_t t1, std::shared_ptr<const Analysis> range) override;
  // A moment outside the range is clamped into it.
  void setMoment(std::uint64_t time_ns) override;
  void setPeakMoment(std::uint64_t time_ns) override;
  // The segment map for the current pool and moment is shown.
  bool isReady() const override { return ready_; }

  // Pools in selector order (pools with segments first).
  std::vector<std::uint32_t> poolOrder() const;
  void selectPool(std::uint32_t pool);
  std::uint32_t currentPool() const { return pool_; }
  // The moment shown: the one set, else the range's peak of used bytes (as
  // the Summary's pies); momentIsPeakUsed() says which.
  std::uint64_t moment() const;
  bool momentIsPeakUsed() const { return !moment_ || moment_is_peak_; }

  const SegmentMap& map() const { return map_; }
  SegmentRows* rows() const { return rows_; }
  SegmentFragmentationChart* chart() const { return chart_; }
  OomExplainer* explainer() const { return explainer_; }
  QString headline() const;
  QString note() const;         // the "no segment information" line, else empty
  QString spanDetails() const;  // the side pane's text

 private:
  void requestMap();
  void showMap(SegmentMap map);
  void showSpan(int row, int span);
  void changeMoment(std::uint64_t time_ns, bool peak);
  QString momentText(std::uint64_t t) const;  // "17.2 ms (peak used)"
  const PoolStats* poolStats() const;

  std::shared_ptr<const Session> session_;
  std::uint64_t t0_ = 0, t1_ = 1;
  std::optional<std::uint64_t> moment_;  // set by setMoment or a click
  bool moment_is_peak_ = false;          // moment_ came from setPeakMoment
  std::uint64_t peak_used_ns_ = 0;       // of the range
  std::uint32_t pool_ = 0;
  SegmentMap map_;
  bool ready_ = false;

  QComboBox* pools_;
  QLabel* headline_;
  QLabel* note_;
  SegmentRows* rows_;
  QTextBrowser* details_;
  SegmentFragmentationChart* chart_;
  OomExplainer* explainer_;
  SegmentWorker* worker_;
};

}  // namespace memtrail::gui
