#include "diff_flame.hpp"

#include <QComboBox>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollArea>
#include <QScrollBar>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>

#include "compare_model.hpp"
#include "flame_graph.hpp"
#include "format.hpp"

namespace memtrail::gui {

namespace {

bool isBytesCost(TreeCost c) {
  return c == TreeCost::peak || c == TreeCost::leaked || c == TreeCost::bytes;
}

}  // namespace

std::vector<FlameBox> diffFlameLayout(const DiffTree& tree, std::uint32_t zoom, double width,
                                      double min_width) {
  return layoutFlame(tree, zoom, width, min_width,
                     [&](std::uint32_t n) { return tree.nodes[n].width; });
}

QColor diffColour(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t larger = std::max(a, b);
  if (a == b || larger == 0) return QColor(245, 245, 245);
  const double change = static_cast<double>(b > a ? b - a : a - b) / static_cast<double>(larger);
  const int fade = 235 - static_cast<int>(175 * change);  // 235: a hint, 60: all new / all gone
  return b > a ? QColor(255, fade, fade) : QColor(fade, fade, 255);
}

// ---------------------------------------------------------------- graph

DiffFlameGraph::DiffFlameGraph(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
}

void DiffFlameGraph::setTree(std::shared_ptr<const DiffTree> tree) {
  tree_ = std::move(tree);
  zoom_ = DiffTree::kRoot;
  relayout();
}

void DiffFlameGraph::zoomTo(std::uint32_t node) {
  zoom_ = tree_ && node < tree_->nodes.size() ? node : DiffTree::kRoot;
  relayout();
}

void DiffFlameGraph::setSearch(const QString& text) {
  search_ = text;
  update();
}

void DiffFlameGraph::relayout() {
  boxes_ = tree_ ? diffFlameLayout(*tree_, zoom_, width()) : std::vector<FlameBox>{};
  int depth = 0;
  for (const FlameBox& b : boxes_) depth = std::max(depth, b.depth);
  setMinimumHeight((depth + 1) * kRowHeight + 1);
  update();
}

void DiffFlameGraph::resizeEvent(QResizeEvent*) {
  relayout();
}

QRectF DiffFlameGraph::boxRect(const FlameBox& b) const {
  return QRectF(b.x, height() - (b.depth + 1) * kRowHeight, b.width, kRowHeight - 1);
}

QString DiffFlameGraph::describe(std::uint32_t node) const {
  const DiffTreeNode& n = tree_->nodes[node];
  auto text = isBytesCost(tree_->cost) ? &bytesText : &countText;
  const QString name =
      node == DiffTree::kRoot ? tr("all") : QString::fromStdString(tree_->name(node));
  const QString delta =
      isBytesCost(tree_->cost) ? signedBytesText(n.a, n.b) : signedCountText(n.a, n.b);
  return tr("%1 — A %2 → B %3 (%4)").arg(name, text(n.a), text(n.b), delta);
}

void DiffFlameGraph::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  if (boxes_.empty()) {
    p.setPen(palette().text().color());
    p.drawText(rect(), Qt::AlignCenter,
               tree_ ? tr("nothing of this cost in either trace") : tr("No second trace"));
    return;
  }
  const QFontMetrics fm(font());
  for (const FlameBox& b : boxes_) {
    const QRectF r = boxRect(b);
    const DiffTreeNode& n = tree_->nodes[b.node];
    const bool root = b.node == DiffTree::kRoot;
    QColor fill = diffColour(n.a, n.b);
    if (!search_.isEmpty() && !root &&
        QString::fromStdString(tree_->name(b.node)).contains(search_, Qt::CaseInsensitive))
      fill = QColor(230, 80, 230);
    p.fillRect(r, fill);
    p.setPen(QColor(200, 200, 200));
    p.drawRect(r);
    if (r.width() < 4 * fm.averageCharWidth()) continue;
    const QString label = root ? describe(b.node) : QString::fromStdString(tree_->name(b.node));
    p.setPen(Qt::black);
    p.drawText(r.adjusted(3, 0, -3, 0), Qt::AlignVCenter | Qt::AlignLeft,
               fm.elidedText(label, Qt::ElideRight, static_cast<int>(r.width()) - 6));
  }
}

std::uint32_t DiffFlameGraph::nodeAt(const QPoint& pt) const {
  for (const FlameBox& b : boxes_)
    if (boxRect(b).contains(pt)) return b.node;
  return TreeNode::kNone;
}

void DiffFlameGraph::mousePressEvent(QMouseEvent* event) {
  const std::uint32_t n = nodeAt(event->position().toPoint());
  if (n == TreeNode::kNone) return;
  if (n == zoom_) return zoomTo(n == DiffTree::kRoot ? n : tree_->nodes[n].parent);
  zoomTo(n);
}

void DiffFlameGraph::mouseMoveEvent(QMouseEvent* event) {
  const std::uint32_t n = nodeAt(event->position().toPoint());
  const QString text = n == TreeNode::kNone ? QString() : describe(n);
  setToolTip(text);
  emit hovered(text);
}

// While zoomed, Esc zooms out instead of resetting the window's range.
bool DiffFlameGraph::event(QEvent* event) {
  if (event->type() == QEvent::ShortcutOverride &&
      static_cast<QKeyEvent*>(event)->key() == Qt::Key_Escape && zoom_ != DiffTree::kRoot) {
    event->accept();
    return true;
  }
  return QWidget::event(event);
}

void DiffFlameGraph::keyPressEvent(QKeyEvent* event) {
  if (event->key() == Qt::Key_Escape && zoom_ != DiffTree::kRoot) return zoomTo(DiffTree::kRoot);
  QWidget::keyPressEvent(event);
}

// ---------------------------------------------------------------- view

DiffFlameView::DiffFlameView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 4, 0, 0);
  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("Cost"), this));
  cost_box_ = newFlameCostBox(this);
  controls->addWidget(cost_box_);
  search_ = new QLineEdit(this);
  search_->setPlaceholderText(tr("Highlight function"));
  search_->setClearButtonEnabled(true);
  controls->addWidget(search_, 1);
  layout->addLayout(controls);
  heading_ = new QLabel(this);
  layout->addWidget(heading_);
  scroll_ = new QScrollArea(this);
  scroll_->setWidgetResizable(true);
  graph_ = new DiffFlameGraph(scroll_);
  scroll_->setWidget(graph_);
  layout->addWidget(scroll_, 1);
  connect(cost_box_, &QComboBox::currentIndexChanged, this,
          [this](int i) { setCost(static_cast<TreeCost>(i)); });
  connect(search_, &QLineEdit::textChanged, graph_, &DiffFlameGraph::setSearch);
  connect(graph_, &DiffFlameGraph::hovered, this, [this](const QString& text) {
    if (!text.isEmpty()) heading_->setText(text);
  });
}

void DiffFlameView::setTrees(std::shared_ptr<const CallTree> a, std::shared_ptr<const CallTree> b) {
  a_ = std::move(a);
  b_ = std::move(b);
  rebuild();
}

void DiffFlameView::setCost(TreeCost cost) {
  if (cost_box_->currentIndex() != static_cast<int>(cost))
    cost_box_->setCurrentIndex(static_cast<int>(cost));  // comes back here
  if (cost == cost_ && graph_->tree()) return;
  cost_ = cost;
  rebuild();
}

void DiffFlameView::rebuild() {
  if (!a_ || !b_) {
    graph_->setTree(nullptr);
    heading_->setText(tr("No second trace"));
    return;
  }
  graph_->setTree(std::make_shared<const DiffTree>(diff_call_trees(*a_, *b_, cost_)));
  heading_->setText(tr("Top-down, main at the bottom; width: the larger of A and B per call "
                       "path; red: more in B, blue: less. %1")
                        .arg(graph_->describe(DiffTree::kRoot)));
  QTimer::singleShot(0, this, [this] {
    scroll_->verticalScrollBar()->setValue(scroll_->verticalScrollBar()->maximum());
  });
}

}  // namespace memtrail::gui
