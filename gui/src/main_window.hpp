// memtrail-gui's main window: one tab per view (views.cpp registers them),
// loading a trace on a worker thread with progress and Cancel, the range and
// moment every view follows, recent files, drag and drop.
//
// Loading: openPath() resolves a `memtrail run` directory to its first
// process, then Session::open runs off the GUI thread; loaded() or
// loadFailed(message) or loadCancelled() ends it. Range: rangeSelected from a
// view (or applyRange) runs Session::analyze_range off the GUI thread, then
// every view gets setRange(t0, t1, analysis); rangeApplied() follows.
// Moment: the window owns one, sent to every view: the range's peak of used
// bytes at load, after "Go to peak used" and whenever a new range leaves the
// chosen moment out; else the one chosen in a view (clamped to the range).
// The corner of the tab bar names both in every tab.
#pragma once

#include <QMainWindow>
#include <QMessageBox>
#include <QPointer>
#include <QString>
#include <QStringList>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "memtrail/gui/session_view.hpp"
#include "memtrail/run_index.hpp"
#include "memtrail/session.hpp"

class QLabel;
class QTabWidget;
class QMenu;
class QToolButton;

namespace memtrail::gui {

class BackgroundTasks;
class LoadStatus;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  static constexpr int kMinimumWidth = 860, kMinimumHeight = 560;
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Views, in tab order. The window owns them.
  void addView(const QString& id, const QString& title, SessionView* view);
  // An ID is a tab's, or "ID-PART" for a part of one (compare-flame):
  // view() is then the tab, and showView() shows the part in it.
  SessionView* view(const QString& id) const;
  QStringList viewIds() const;       // the tabs', each followed by its parts'
  bool showView(const QString& id);  // false: no such view
  QString currentViewId() const;

  // Starts loading a .mtr file or the first process of a run directory.
  void openPath(const QString& path);
  // Loads another process of the open run (run()->processes[index]); what
  // File → Process of the Run does. False for a bad index or no run.
  bool openProcess(std::size_t index);
  void cancelLoad();
  bool isLoading() const;
  const LoadStatus* loadStatus() const { return load_status_; }
  std::shared_ptr<const Session> session() const { return session_; }
  const std::optional<RunIndex>& run() const { return run_; }

  // [t0, t1] for every view (clamped to the trace); whole trace when t1 < t0
  // is not given. Asynchronous: rangeApplied() follows.
  void applyRange(std::uint64_t t0, std::uint64_t t1);
  void resetRange();
  // While a range is analysed the views are greyed (their old numbers) and
  // the corner says "re-analysing"; the status bar shows progress, Cancel.
  bool viewsGreyed() const;
  void cancelRange();
  void applyMoment(std::uint64_t time_ns);
  void goToPeakUsed();
  std::uint64_t moment() const { return moment_; }
  bool momentIsPeakUsed() const { return moment_is_peak_; }
  // The corner heading: "moment … (peak used) · range …".
  QString focusText() const;
  std::uint64_t rangeFrom() const { return range_from_; }
  std::uint64_t rangeTo() const { return range_to_; }
  bool allViewsReady() const;

  // The last load error (one line); empty after a successful load.
  QString lastError() const { return last_error_; }
  // Failed loads show a dialog unless off (--screenshot prints instead).
  void setErrorDialogs(bool on) { error_dialogs_ = on; }
  QMessageBox* errorDialog() const { return error_dialog_; }
  // Recent files are remembered in QSettings unless off (--screenshot).
  void setRememberRecent(bool on) { remember_recent_ = on; }
  QStringList recentFiles() const;
  // The status bar's text: the file and the range (or why there is none).
  QString statusText() const;

 signals:
  void loadStarted(const QString& path);
  void loaded();
  void loadFailed(const QString& message);
  void loadCancelled();
  void runChanged();  // run() changed (a new run directory or none)
  void rangeApplied(std::uint64_t t0, std::uint64_t t1);
  void allReady();  // every view is ready for the session and range

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  struct ViewEntry {
    QString id, title;
    SessionView* view = nullptr;
  };
  void buildMenus();
  void rebuildProcessMenu();
  void rebuildRecentMenu();
  void rememberRecent(const QString& path);
  void openFileDialog();
  void startLoad(const QString& file);
  void finishLoad(OpenResult result, const QString& file);
  void failLoad(const QString& message);
  void clearSession();
  void setViewsRange(std::uint64_t t0, std::uint64_t t1, std::shared_ptr<const Analysis> a);
  void viewReady(const ViewEntry& entry);
  void updateStatus();
  void placeFocusCorner();
  void sendMoment();
  void setViewsGreyed(bool greyed);
  void endRangeProgress();

  std::vector<ViewEntry> views_;
  QTabWidget* tabs_ = nullptr;
  QLabel* status_label_ = nullptr;
  LoadStatus* load_status_ = nullptr;
  QMenu* process_menu_ = nullptr;
  QMenu* recent_menu_ = nullptr;
  BackgroundTasks* loader_ = nullptr;
  BackgroundTasks* ranger_ = nullptr;
  std::shared_ptr<const Session> session_;
  std::optional<RunIndex> run_;
  QString file_;
  std::uint64_t range_from_ = 0, range_to_ = 0;
  std::shared_ptr<const Analysis> range_analysis_;
  std::uint64_t moment_ = 0;
  bool moment_is_peak_ = true;
  QLabel* focus_label_ = nullptr;
  QToolButton* peak_button_ = nullptr;
  bool loading_ = false;
  bool range_pending_ = false;  // analyze_range is running
  bool all_ready_sent_ = false;
  bool error_dialogs_ = true;
  bool remember_recent_ = true;
  QString last_error_;
  QPointer<QMessageBox> error_dialog_;
};

}  // namespace memtrail::gui
