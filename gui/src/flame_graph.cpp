#include "flame_graph.hpp"

#include <QComboBox>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <functional>

#include "format.hpp"
#include "timing.hpp"

namespace memtrail::gui {

namespace {

bool isBytesCost(TreeCost c) {
  return c == TreeCost::peak || c == TreeCost::leaked || c == TreeCost::bytes;
}

// flamegraph.pl's warm palette, a fixed colour per function name.
QColor warmColour(const std::string& name) {
  const std::size_t h = std::hash<std::string>{}(name);
  return QColor(205 + static_cast<int>(h % 50), 80 + static_cast<int>((h >> 8) % 120),
                30 + static_cast<int>((h >> 16) % 40));
}

}  // namespace

QComboBox* newFlameCostBox(QWidget* parent) {
  auto* box = new QComboBox(parent);
  for (const char* name : {"peak (bytes live at the peak)", "allocations", "temporary allocations",
                           "leaked bytes", "bytes allocated"})
    box->addItem(QWidget::tr(name));
  return box;
}

std::vector<FlameBox> flameLayout(const CallTree& tree, TreeCost cost, std::uint32_t zoom,
                                  double width, double min_width) {
  return layoutFlame(tree, zoom, width, min_width,
                     [&](std::uint32_t n) { return tree.nodes[n].inclusive[cost]; });
}

FlameGraph::FlameGraph(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
}

void FlameGraph::setTree(std::shared_ptr<const CallTree> tree) {
  tree_ = std::move(tree);
  zoom_ = CallTree::kRoot;
  relayout();
}

void FlameGraph::setCost(TreeCost cost) {
  cost_ = cost;
  relayout();
}

void FlameGraph::zoomTo(std::uint32_t node) {
  if (!tree_ || node >= tree_->nodes.size()) node = CallTree::kRoot;
  zoom_ = node;
  relayout();
  emit zoomed(node);
}

void FlameGraph::setSearch(const QString& text) {
  search_ = text;
  search_rule_ = SiteFilter::search_box(text.toStdString());
  update();
}

void FlameGraph::relayout() {
  boxes_ = tree_ ? flameLayout(*tree_, cost_, zoom_, width()) : std::vector<FlameBox>{};
  int depth = 0;
  for (const FlameBox& b : boxes_) depth = std::max(depth, b.depth);
  setMinimumHeight((depth + 1) * kRowHeight + 1);
  update();
}

void FlameGraph::resizeEvent(QResizeEvent*) {
  relayout();
}

// Row 0 (the zoom root) at the bottom, callees above their callers.
QRectF FlameGraph::boxRect(const FlameBox& b) const {
  return QRectF(b.x, height() - (b.depth + 1) * kRowHeight, b.width, kRowHeight - 1);
}

bool FlameGraph::searched(std::uint32_t node) const {
  if (search_.isEmpty() || node == CallTree::kRoot) return false;
  return search_rule_.matches(tree_->symbols[tree_->nodes[node].symbol]);
}

QString FlameGraph::describe(std::uint32_t node) const {
  const std::uint64_t v = tree_->nodes[node].inclusive[cost_];
  const std::uint64_t total = tree_->total()[cost_];
  const QString name =
      node == CallTree::kRoot ? tr("all") : QString::fromStdString(tree_->name(node));
  return tr("%1 — %2 (%3 %)")
      .arg(name, isBytesCost(cost_) ? bytesText(v) : countText(v))
      .arg(total ? 100.0 * static_cast<double>(v) / static_cast<double>(total) : 0.0, 0, 'f', 1);
}

void FlameGraph::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  if (boxes_.empty()) {
    p.setPen(palette().text().color());
    p.drawText(rect(), Qt::AlignCenter,
               tree_ ? tr("nothing of this cost in the range") : tr("No call tree yet"));
    return;
  }
  const QFontMetrics fm(font());
  bool highlighted = false;
  for (const FlameBox& b : boxes_) {
    const QRectF r = boxRect(b);
    const bool root = b.node == CallTree::kRoot;
    const TreeSymbol* s = root ? nullptr : &tree_->symbols[tree_->nodes[b.node].symbol];
    QColor fill = root || s->pool ? QColor(200, 200, 200) : warmColour(s->name);
    if (!search_.isEmpty()) {
      const bool hit = searched(b.node);
      highlighted = highlighted || hit;
      fill = hit ? QColor(230, 80, 230) : fill.lighter(130);
    }
    p.fillRect(r, fill);
    if (r.width() < 4 * fm.averageCharWidth()) continue;
    const QString label = root ? describe(b.node) : QString::fromStdString(s->name);
    p.setPen(Qt::black);
    p.drawText(r.adjusted(3, 0, -3, 0), Qt::AlignVCenter | Qt::AlignLeft,
               fm.elidedText(label, Qt::ElideRight, static_cast<int>(r.width()) - 6));
  }
  // The real-window drive (xdotool_drive.sh) waits for a search that lit a frame.
  if (highlighted) timing_mark("flame-search-highlighted");
}

std::uint32_t FlameGraph::nodeAt(const QPoint& pt) const {
  for (const FlameBox& b : boxes_)
    if (boxRect(b).contains(pt)) return b.node;
  return TreeNode::kNone;
}

void FlameGraph::mousePressEvent(QMouseEvent* event) {
  const std::uint32_t n = nodeAt(event->position().toPoint());
  if (n == TreeNode::kNone) return;
  // The bottom box goes one level back out; any other zooms in.
  if (n == zoom_) return zoomTo(n == CallTree::kRoot ? n : tree_->nodes[n].parent);
  zoomTo(n);
}

void FlameGraph::mouseMoveEvent(QMouseEvent* event) {
  const std::uint32_t n = nodeAt(event->position().toPoint());
  const QString text = n == TreeNode::kNone ? QString() : describe(n);
  setToolTip(text);
  emit hovered(text);
}

// While zoomed, Esc is ours (zoom out), not the window's "whole trace"
// shortcut: taking the ShortcutOverride makes Qt deliver it as a key press.
bool FlameGraph::event(QEvent* event) {
  if (event->type() == QEvent::ShortcutOverride &&
      static_cast<QKeyEvent*>(event)->key() == Qt::Key_Escape && zoom_ != CallTree::kRoot) {
    event->accept();
    return true;
  }
  return QWidget::event(event);
}

void FlameGraph::keyPressEvent(QKeyEvent* event) {
  if (event->key() == Qt::Key_Escape && zoom_ != CallTree::kRoot) return zoomTo(CallTree::kRoot);
  QWidget::keyPressEvent(event);
}

}  // namespace memtrail::gui
