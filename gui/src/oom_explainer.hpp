// The OOM explainer of memtrail-gui's Fragmentation tab: pick an `oom` event
// of the trace (Session::ooms) or "the moment shown", and see
// Session::explain for it: per pool the request beside the largest free
// block (fits / does not fit), reserved / used / free, and the partly used
// segments with the live blocks that pin them (a block's stack on selection).
// explain() runs off the GUI thread (SegmentWorker).
#pragma once

#include <QWidget>
#include <memory>
#include <optional>

#include "memtrail/session.hpp"

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QTreeWidget;
class QTreeWidgetItem;

namespace memtrail::gui {

class SegmentWorker;

class OomExplainer : public QWidget {
  Q_OBJECT

 public:
  explicit OomExplainer(QWidget* parent = nullptr);

  void setSession(std::shared_ptr<const Session> session);
  // The moment the "at the moment shown" choice explains.
  void setMoment(std::uint64_t time_ns);
  // 0: the moment shown; i > 0: Session::ooms()[i - 1].
  void choose(int choice);
  int choice() const;

  // The explanation shown (valid once isReady()).
  bool isReady() const { return ready_; }
  const OomExplanation& explanation() const { return explanation_; }
  QTreeWidget* tree() const { return tree_; }
  QString stackText() const;

  // Item roles: what a tree row stands for.
  static constexpr int kPoolIndexRole = Qt::UserRole + 1;     // index into explanation().pools
  static constexpr int kSegmentIndexRole = Qt::UserRole + 2;  // index into PoolPart::pinned
  static constexpr int kBlockIndexRole = Qt::UserRole + 3;    // index into segment.blocks

 signals:
  // The user chose an oom event: the fragmentation view moves to its pool
  // and moment.
  void oomChosen(std::uint32_t pool, std::uint64_t time_ns);
  void ready();

 private:
  void request();
  void display(OomExplanation explanation);
  void showStack(QTreeWidgetItem* item);

  std::shared_ptr<const Session> session_;
  std::uint64_t moment_ = 0;
  bool has_moment_ = false;
  OomExplanation explanation_;
  bool ready_ = false;
  QComboBox* choices_;
  QLabel* headline_;
  QTreeWidget* tree_;
  QPlainTextEdit* stack_;
  SegmentWorker* worker_;
};

}  // namespace memtrail::gui
