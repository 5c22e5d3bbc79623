// memtrail-gui's Processes tab: the processes of an opened `memtrail run`
// directory, one row each as `memtrail report` prints them for a run (pid,
// parent, exec, program, events, peak, leaked bytes and blocks) and the exit
// status index.tsv recorded. The figures of the process on screen come from
// its Session; the others are analysed one at a time off the GUI thread
// (never the one the window is loading: two passes over one trace at once
// doubled the GUI's peak memory on a run of one large process).
// Double click (or Enter, or the Open button) on a row opens that process
// (processChosen). A filter box keeps the processes whose program holds its
// text (any case; for a whole name, `report --program NAME`'s processes).
// Without a run directory it says how to get one.
#pragma once

#include <optional>
#include <vector>

#include "background.hpp"
#include "memtrail/gui/session_view.hpp"
#include "memtrail/run_index.hpp"

class QLabel;
class QLineEdit;
class QPushButton;
class QTreeWidget;

namespace memtrail::gui {

class ProcessesView : public SessionView {
  Q_OBJECT

 public:
  explicit ProcessesView(QWidget* parent = nullptr);

  void setSession(std::shared_ptr<const Session> session) override;
  void setRange(std::uint64_t, std::uint64_t, std::shared_ptr<const Analysis>) override {}
  // Every row's figures are in (or there is no run).
  bool isReady() const override;
  void setRun(const std::optional<RunIndex>& run);
  // The window is loading `file` (empty: the load ended without a session):
  // its figures will come from setSession, so it is not analysed here.
  void setLoading(const std::string& file);
  // For tests: how many processes this view has analysed itself.
  std::size_t analysesStarted() const { return analyses_started_; }

  // For tests: the text of row `row`, column `column` (columnIndex(name)).
  QString cell(int row, int column) const;
  int rowCount() const;
  static int columnIndex(const QString& name);  // "pid", "program", "peak", ...
  QString heading() const;
  void setFilter(const QString& text);
  QLineEdit* filter() const { return filter_; }
  bool rowHidden(int row) const;  // filtered out

 signals:
  // The user asked for process `index` of the run (RunIndex::processes).
  void processChosen(std::size_t index);

 private:
  struct Figures {
    bool known = false;
    std::string error;
    std::uint64_t events = 0, peak = 0, leaked_bytes = 0, leaked_blocks = 0;
  };
  void rebuildRows();
  void applyFilter();
  void showFigures(std::size_t index);
  void analyzeNext();
  void chooseCurrent();

  BackgroundTasks tasks_;
  std::shared_ptr<const Session> session_;
  std::optional<RunIndex> run_;
  std::vector<Figures> figures_;
  std::string loading_;  // the file the window is loading
  bool analyzing_ = false;
  std::size_t analyses_started_ = 0;
  QLabel* heading_;
  QLineEdit* filter_;
  QTreeWidget* table_;
  QPushButton* open_;
};

}  // namespace memtrail::gui
