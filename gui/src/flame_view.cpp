#include "flame_view.hpp"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QScrollArea>
#include <QScrollBar>
#include <QTimer>
#include <QVBoxLayout>

#include "call_tree_cache.hpp"
#include "flame_graph.hpp"

namespace memtrail::gui {

FlameView::FlameView(CallTreeCache* trees, QWidget* parent)
    : SessionView(parent), trees_(trees ? trees : new CallTreeCache(this)) {
  auto* layout = new QVBoxLayout(this);
  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("Cost"), this));
  cost_box_ = newFlameCostBox(this);
  controls->addWidget(cost_box_);
  direction_box_ = new QComboBox(this);
  direction_box_->addItem(tr("Top-down: main at the bottom"));
  direction_box_->addItem(tr("Bottom-up: allocating functions at the bottom"));
  controls->addWidget(direction_box_);
  search_ = new QLineEdit(this);
  search_->setPlaceholderText(tr("Highlight function, file or module"));
  search_->setClearButtonEnabled(true);
  controls->addWidget(search_, 1);
  layout->addLayout(controls);
  heading_ = new QLabel(tr("No trace loaded"), this);
  layout->addWidget(heading_);
  scroll_ = new QScrollArea(this);
  scroll_->setWidgetResizable(true);
  graph_ = new FlameGraph(scroll_);
  scroll_->setWidget(graph_);
  layout->addWidget(scroll_, 1);

  connect(cost_box_, &QComboBox::currentIndexChanged, this,
          [this](int i) { setCost(static_cast<TreeCost>(i)); });
  connect(direction_box_, &QComboBox::currentIndexChanged, this, [this](int i) {
    setDirection(i == 0 ? TreeDirection::top_down : TreeDirection::bottom_up);
  });
  connect(search_, &QLineEdit::textChanged, graph_, &FlameGraph::setSearch);
  connect(graph_, &FlameGraph::hovered, this, [this](const QString& text) {
    if (!text.isEmpty()) heading_->setText(text);
  });
  connect(graph_, &FlameGraph::zoomed, this, [this](std::uint32_t node) {
    heading_->setText(node == CallTree::kRoot
                          ? tr("Whole tree. Click a frame to zoom into it.")
                          : tr("Zoomed into %1. Click the bottom frame or press Esc to go back.")
                                .arg(QString::fromStdString(graph_->tree()->name(node))));
  });
}

void FlameView::setSession(std::shared_ptr<const Session> session) {
  trees_->clear();
  range_.reset();
  ready_ = false;
  graph_->setTree(nullptr);
  heading_->setText(session ? tr("Loading...") : tr("No trace loaded"));
}

void FlameView::setRange(std::uint64_t, std::uint64_t, std::shared_ptr<const Analysis> range) {
  range_ = std::move(range);
  ready_ = false;
  if (range_) buildTree();
}

void FlameView::buildTree() {
  ready_ = false;
  heading_->setText(tr("Building the call tree..."));
  const TreeDirection d = direction_;
  trees_->request(range_, d, this,
                  [this, d, a = std::weak_ptr(range_)](std::shared_ptr<const CallTree> t) {
                    if (a.lock() == range_ && d == direction_) showTree(std::move(t));
                  });
}

void FlameView::showTree(std::shared_ptr<const CallTree> tree) {
  graph_->setTree(std::move(tree));
  heading_->setText(tr("Whole tree. Click a frame to zoom into it."));
  // The root sits at the bottom: show it first.
  QTimer::singleShot(0, this, [this] {
    scroll_->verticalScrollBar()->setValue(scroll_->verticalScrollBar()->maximum());
  });
  ready_ = true;
  emit ready();
}

void FlameView::setDirection(TreeDirection d) {
  if (d == direction_) return;
  direction_ = d;
  direction_box_->setCurrentIndex(d == TreeDirection::top_down ? 0 : 1);
  if (range_) buildTree();
}

void FlameView::setCost(TreeCost c) {
  cost_box_->setCurrentIndex(static_cast<int>(c));
  graph_->setCost(c);
}

}  // namespace memtrail::gui
