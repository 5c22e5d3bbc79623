// The Compare tab's differential flame graph: the analyzer's DiffTree
// (memtrail/diff_tree.hpp) of A's and B's top-down call trees for one cost.
// A box is as wide as its node's width (the larger side, per call path),
// red where B has more than A, blue where less, white where equal, the
// saturation the change relative to the larger side. Click a box to zoom
// into it, the bottom box (or Esc) to go back out; hovering names A, B and
// the change. The view adds the cost selector and a search box.
#pragma once

#include <QString>
#include <QWidget>
#include <cstdint>
#include <memory>
#include <vector>

#include "flame_graph.hpp"
#include "memtrail/diff_tree.hpp"

class QComboBox;
class QLabel;
class QLineEdit;
class QScrollArea;

namespace memtrail::gui {

// Boxes of the tree under `zoom` over `width` pixels, depth first, children
// left to right by width; boxes under `min_width` pixels are left out.
std::vector<FlameBox> diffFlameLayout(const DiffTree& tree, std::uint32_t zoom, double width,
                                      double min_width = 0.5);
// Red for growth, blue for shrinking, white for no change.
QColor diffColour(std::uint64_t a, std::uint64_t b);

class DiffFlameGraph : public QWidget {
  Q_OBJECT

 public:
  explicit DiffFlameGraph(QWidget* parent = nullptr);
  void setTree(std::shared_ptr<const DiffTree> tree);
  const DiffTree* tree() const { return tree_.get(); }
  void zoomTo(std::uint32_t node);
  std::uint32_t zoom() const { return zoom_; }
  void setSearch(const QString& text);
  const std::vector<FlameBox>& boxes() const { return boxes_; }
  std::uint32_t nodeAt(const QPoint& p) const;  // TreeNode::kNone where there is no box
  QString describe(std::uint32_t node) const;

 signals:
  void hovered(const QString& text);

 protected:
  bool event(QEvent* event) override;
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;

 private:
  void relayout();
  QRectF boxRect(const FlameBox& b) const;

  std::shared_ptr<const DiffTree> tree_;
  std::uint32_t zoom_ = DiffTree::kRoot;
  QString search_;
  std::vector<FlameBox> boxes_;
  static constexpr int kRowHeight = 18;
};

// The graph with a cost selector and a search box, over two call trees.
class DiffFlameView : public QWidget {
  Q_OBJECT

 public:
  explicit DiffFlameView(QWidget* parent = nullptr);
  // A's and B's top-down trees (null: clear); the graph is rebuilt per cost.
  void setTrees(std::shared_ptr<const CallTree> a, std::shared_ptr<const CallTree> b);
  // The trees shown (null before setTrees).
  const std::shared_ptr<const CallTree>& treeA() const { return a_; }
  const std::shared_ptr<const CallTree>& treeB() const { return b_; }
  void setCost(TreeCost cost);
  TreeCost cost() const { return cost_; }
  DiffFlameGraph* graph() const { return graph_; }

 private:
  void rebuild();

  std::shared_ptr<const CallTree> a_, b_;
  TreeCost cost_ = TreeCost::peak;
  QComboBox* cost_box_ = nullptr;
  QLineEdit* search_ = nullptr;
  QLabel* heading_ = nullptr;
  QScrollArea* scroll_ = nullptr;
  DiffFlameGraph* graph_ = nullptr;
};

}  // namespace memtrail::gui
