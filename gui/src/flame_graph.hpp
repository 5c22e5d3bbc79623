// A flame graph of a CallTree: one box per node, as wide as its inclusive
// cost, children stacked above their parent (top-down: main at the bottom;
// bottom-up: the allocating functions at the bottom). Click a box to zoom
// into it (it spans the width), click the bottom bar or press Esc to go back
// to the whole tree. Boxes narrower than a pixel are not drawn.
#pragma once

#include <QString>
#include <QWidget>
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "memtrail/call_tree.hpp"
#include "memtrail/site_filter.hpp"

class QComboBox;

namespace memtrail::gui {

// The cost selector of a flame graph (the flame and the compare tabs), its
// entries in TreeCost order: the index is the TreeCost.
QComboBox* newFlameCostBox(QWidget* parent);

struct FlameBox {
  std::uint32_t node = 0;
  int depth = 0;     // 0: the zoom root's row
  double x = 0;      // left edge, in pixels
  double width = 0;  // inclusive cost / the zoom root's inclusive cost * the width
};

// The layout both flame graphs share (the call tree's and the diff tree's):
// the boxes of `tree` under `zoom` over `width` pixels, depth first,
// children left to right, largest first; `weight(node)` is a node's width in
// cost units (never less than its children's sum). Boxes under `min_width`
// pixels (and their children) are left out.
template <class Tree, class Weight>
std::vector<FlameBox> layoutFlame(const Tree& tree, std::uint32_t zoom, double width,
                                  double min_width, Weight weight) {
  std::vector<FlameBox> out;
  if (zoom >= tree.nodes.size() || width <= 0 || weight(zoom) == 0) return out;
  const double scale = width / static_cast<double>(weight(zoom));
  std::vector<FlameBox> todo{{zoom, 0, 0.0, 0.0}};
  while (!todo.empty()) {
    FlameBox t = todo.back();
    todo.pop_back();
    t.width = static_cast<double>(weight(t.node)) * scale;
    if (t.width < min_width) continue;
    out.push_back(t);
    std::vector<std::uint32_t> kids = tree.children(t.node);
    std::stable_sort(kids.begin(), kids.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return weight(a) > weight(b); });
    double x = t.x;
    std::vector<FlameBox> next;
    for (std::uint32_t k : kids) {
      next.push_back({k, t.depth + 1, x, 0.0});
      x += static_cast<double>(weight(k)) * scale;
    }
    todo.insert(todo.end(), next.rbegin(), next.rend());  // the leftmost is taken first
  }
  return out;
}

// The boxes of the tree under `zoom` (kRoot: the whole tree) for `cost` over
// `width` pixels, depth first; boxes under `min_width` pixels (and their
// children) are left out. The zoom root itself is the depth-0 box.
std::vector<FlameBox> flameLayout(const CallTree& tree, TreeCost cost, std::uint32_t zoom,
                                  double width, double min_width = 0.5);

class FlameGraph : public QWidget {
  Q_OBJECT

 public:
  explicit FlameGraph(QWidget* parent = nullptr);

  void setTree(std::shared_ptr<const CallTree> tree);
  const CallTree* tree() const { return tree_.get(); }
  void setCost(TreeCost cost);
  TreeCost cost() const { return cost_; }
  // Zooms into `node` (kRoot: the whole tree).
  void zoomTo(std::uint32_t node);
  std::uint32_t zoom() const { return zoom_; }
  // Boxes whose function, file or module holds `text` are highlighted.
  void setSearch(const QString& text);
  const std::vector<FlameBox>& boxes() const { return boxes_; }
  std::uint32_t nodeAt(const QPoint& p) const;  // TreeNode::kNone where there is no box

  QSize sizeHint() const override { return {800, 400}; }

 signals:
  void zoomed(std::uint32_t node);
  void hovered(const QString& text);  // the box under the mouse, described

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
  bool searched(std::uint32_t node) const;
  QString describe(std::uint32_t node) const;

  std::shared_ptr<const CallTree> tree_;
  TreeCost cost_ = TreeCost::peak;
  std::uint32_t zoom_ = CallTree::kRoot;
  QString search_;
  SiteFilter search_rule_;  // search_ as the filter boxes' rule (built once, asked per box)
  std::vector<FlameBox> boxes_;
  static constexpr int kRowHeight = 18;
};

}  // namespace memtrail::gui
