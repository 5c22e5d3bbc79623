// Compare tab: the window's trace (A) against a second trace (B), as
// `memtrail diff A B` compares them: the analyzer's diff_analyses of A's
// range Analysis and B's Analysis of the same range (B's whole trace when A
// shows its whole trace; else Session::analyze_range of B, which is what
// `memtrail diff --from T0 --to T1` does to both). Shown as per-site deltas
// (sortable, filtered by function, file, module or pool), per-pool deltas,
// both traces' used bytes overlaid over time, and a differential flame graph.
// A's top-down call tree is the window's (CallTreeCache, shared with the Call
// tree and Flame graph tabs); only B's is built here.
//
// B is opened by File → Compare with… or `memtrail-gui A --compare B`; it
// stays while A is reloaded or re-ranged. B's load and the diff run off the
// GUI thread; ready() follows. Without B the tab says how to open one.
#pragma once

#include <QString>
#include <memory>

#include "background.hpp"
#include "memtrail/call_tree.hpp"
#include "memtrail/diff.hpp"
#include "memtrail/gui/session_view.hpp"

class QLabel;
class QLineEdit;
class QTabWidget;
class QTreeView;

namespace memtrail::gui {

class CallTreeCache;
class CompareSitesModel;
class ComparePoolsModel;
class CompareTimeline;
class DiffFlameView;
class MainWindow;

class CompareView : public SessionView {
  Q_OBJECT

 public:
  // `trees`: the window's call trees (null: a cache of its own).
  explicit CompareView(CallTreeCache* trees = nullptr, QWidget* parent = nullptr);

  void setSession(std::shared_ptr<const Session> session) override;
  void setRange(std::uint64_t t0, std::uint64_t t1, std::shared_ptr<const Analysis> range) override;
  bool isReady() const override { return ready_; }
  // "sites" and "flame" (--view compare-flame): the sub-tabs.
  QStringList parts() const override;
  void showPart(const QString& part) override;

  // Loads B (a .mtr file or the first process of a run directory); the
  // diff follows once A is in place too. An empty path forgets B.
  void openCompare(const QString& path);
  // Asks for B in a file dialog (File → Compare with…, the tab's button).
  void chooseCompare();
  QString comparePath() const { return compare_path_; }
  // B's load error (one line); empty when B loaded or none was asked for.
  QString compareError() const { return compare_error_; }
  std::shared_ptr<const Session> compareSession() const { return b_session_; }
  // The diff shown (null: none yet, or no B).
  std::shared_ptr<const DiffResult> diff() const { return diff_; }

  void setFilter(const QString& text);
  CompareSitesModel* sitesModel() const { return sites_model_; }
  ComparePoolsModel* poolsModel() const { return pools_model_; }
  CompareTimeline* timeline() const { return timeline_; }
  DiffFlameView* flame() const { return flame_; }
  QTreeView* sitesView() const { return sites_view_; }
  QString headingText() const;

 signals:
  void compareOpened(const QString& path);  // B finished loading (or failed: compareError)

 private:
  void recompute();
  void showWhenComplete();
  void showDiff(std::shared_ptr<const DiffResult> diff);
  void showEmpty(const QString& why);
  void updateTimeline();
  void setReady();
  bool wholeRange() const;

  CallTreeCache* trees_ = nullptr;
  BackgroundTasks loader_, differ_;
  // What recompute() waits for: A's tree (from trees_) and the diff with B's
  // tree (from differ_).
  std::shared_ptr<const CallTree> tree_a_, tree_b_;
  std::shared_ptr<const DiffResult> pending_diff_;
  std::shared_ptr<const Session> session_, b_session_;
  std::shared_ptr<const Analysis> range_;
  std::uint64_t t0_ = 0, t1_ = 0;
  QString compare_path_, compare_error_;
  bool b_loading_ = false;
  std::shared_ptr<const DiffResult> diff_;
  bool ready_ = false;
  QLabel* heading_ = nullptr;
  QLineEdit* filter_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  CompareSitesModel* sites_model_ = nullptr;
  ComparePoolsModel* pools_model_ = nullptr;
  QTreeView* sites_view_ = nullptr;
  QTreeView* pools_view_ = nullptr;
  CompareTimeline* timeline_ = nullptr;
  DiffFlameView* flame_ = nullptr;
};

// Registers the Compare tab and File → Compare with… in `window`.
void addCompareView(MainWindow& window, CallTreeCache* trees = nullptr);
// `--compare FILE`: B for the window's Compare tab, which it shows (false:
// no such tab).
bool openCompareIn(MainWindow& window, const QString& path);

}  // namespace memtrail::gui
