// memtrail-gui's What-if tab: pick a pool and a policy (caching with a
// PYTORCH_CUDA_ALLOC_CONF-style string, BFC, malloc, or a workspace over the
// iterations of a scope or mark) and see the replayed reserved bytes beside
// the recorded ones. The replay is `memtrail replay`'s engine run in the
// background (WhatIfModel); its peaks are `memtrail replay --json`'s.
// It replays when asked (Replay), when the tab is shown with a session, and
// at load when --policy chose one; the whole trace is replayed and the chart
// shows the window's range.
#pragma once

#include "memtrail/gui/session_view.hpp"
#include "whatif_chart.hpp"
#include "whatif_model.hpp"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTreeWidget;

namespace memtrail::gui {

class WhatIfView : public SessionView {
  Q_OBJECT

 public:
  explicit WhatIfView(QWidget* parent = nullptr);

  void setSession(std::shared_ptr<const Session> session) override;
  void setRange(std::uint64_t t0, std::uint64_t t1, std::shared_ptr<const Analysis> range) override;
  bool isReady() const override;

  // --policy: the controls take `spec` and the next session is replayed at once.
  void setPolicy(const WhatIfSpec& spec);
  // What the controls say now (the pool filled in).
  WhatIfSpec spec() const;
  // Replays spec() (no-op without a session).
  void replay();

  // For tests.
  const WhatIfModel& model() const { return model_; }
  const WhatIfChart& chart() const { return *chart_; }
  QString heading() const;
  int rowCount() const;
  QString cell(int row, int column) const;  // columns: figure, recorded, replayed

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void fillPools();
  void fillMarks();
  void showSpec(const WhatIfSpec& spec);
  void allocatorChanged();
  void showResult();
  void showRecordedOnly();
  void fillTable(const WhatIfResult& r);
  void fitTable();
  std::vector<WhatIfChart::Line> recordedLines() const;

  WhatIfModel model_;
  std::shared_ptr<const Session> session_;
  std::uint64_t t0_ = 0, t1_ = 0;
  bool replay_on_load_ = false;
  bool pending_ = false;  // a replay was asked and has not finished
  QComboBox* pool_;
  QComboBox* allocator_;
  QLineEdit* conf_;
  QLineEdit* capacity_;
  QLabel* mark_label_;
  QComboBox* mark_;
  QPushButton* run_;
  QPushButton* cancel_;
  QLabel* heading_;
  WhatIfChart* chart_;
  QTreeWidget* table_;
};

}  // namespace memtrail::gui
