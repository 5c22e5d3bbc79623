// Flame graph tab: the range's call tree (memtrail/call_tree.hpp) as a flame
// graph (FlameGraph) with a cost selector (peak, allocations, temporary,
// leaked, bytes), a top-down / bottom-up toggle and a search box; click a
// frame to zoom into it. The tree comes from the window's CallTreeCache,
// shared with the Call tree tab (built once per range and direction, off the
// GUI thread); ready() follows.
#pragma once

#include <memory>

#include "memtrail/call_tree.hpp"
#include "memtrail/gui/session_view.hpp"

class QComboBox;
class QLabel;
class QLineEdit;
class QScrollArea;

namespace memtrail::gui {

class CallTreeCache;
class FlameGraph;

class FlameView : public SessionView {
  Q_OBJECT

 public:
  // `trees` is shared with the Call tree tab; null: the view keeps its own.
  explicit FlameView(CallTreeCache* trees = nullptr, QWidget* parent = nullptr);

  void setSession(std::shared_ptr<const Session> session) override;
  void setRange(std::uint64_t t0, std::uint64_t t1, std::shared_ptr<const Analysis> range) override;
  bool isReady() const override { return ready_; }

  void setDirection(TreeDirection d);
  void setCost(TreeCost c);
  FlameGraph* graph() const { return graph_; }

 private:
  void buildTree();
  void showTree(std::shared_ptr<const CallTree> tree);

  CallTreeCache* trees_ = nullptr;
  std::shared_ptr<const Analysis> range_;
  TreeDirection direction_ = TreeDirection::top_down;
  bool ready_ = false;
  QLabel* heading_ = nullptr;
  QComboBox* cost_box_ = nullptr;
  QComboBox* direction_box_ = nullptr;
  QLineEdit* search_ = nullptr;
  QScrollArea* scroll_ = nullptr;
  FlameGraph* graph_ = nullptr;
};

}  // namespace memtrail::gui
