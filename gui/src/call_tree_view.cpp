#include "call_tree_view.hpp"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSplitter>
#include <QTreeView>
#include <QVBoxLayout>

#include "call_tree_cache.hpp"
#include "call_tree_model.hpp"
#include "cost_bar_delegate.hpp"
#include "format.hpp"
#include "top_sites_model.hpp"

namespace memtrail::gui {

namespace {

QTreeView* newTreeView(QWidget* parent) {
  auto* view = new QTreeView(parent);
  view->setUniformRowHeights(true);
  view->setAlternatingRowColors(true);
  view->header()->setStretchLastSection(false);
  return view;
}

}  // namespace

CallTreeView::CallTreeView(CallTreeCache* trees, QWidget* parent)
    : SessionView(parent), trees_(trees ? trees : new CallTreeCache(this)) {
  auto* layout = new QVBoxLayout(this);
  heading_ = new QLabel(tr("No trace loaded"), this);
  heading_->setWordWrap(true);
  layout->addWidget(heading_);

  auto* controls = new QHBoxLayout;
  direction_box_ = new QComboBox(this);
  direction_box_->addItem(tr("Bottom-up: allocating functions first"));
  direction_box_->addItem(tr("Top-down: from main and thread starts"));
  direction_box_->setToolTip(tr("Which end of the call stacks the tree starts from"));
  controls->addWidget(direction_box_);
  filter_ = new QLineEdit(this);
  filter_->setPlaceholderText(tr("Filter by function, file or module"));
  filter_->setClearButtonEnabled(true);
  controls->addWidget(filter_, 1);
  layout->addLayout(controls);

  auto* split = new QSplitter(Qt::Vertical, this);
  model_ = new CallTreeModel(this);
  tree_ = newTreeView(split);
  tree_->setModel(model_);
  tree_->setItemDelegate(new CostBarDelegate(CallTreeModel::kFractionRole, tree_));
  tree_->header()->setSortIndicator(CallTreeModel::peak, Qt::DescendingOrder);
  tree_->setSortingEnabled(true);
  tree_->header()->setSectionResizeMode(CallTreeModel::function, QHeaderView::Stretch);
  tree_->header()->setMinimumSectionSize(60);

  auto* bottom = new QWidget(split);
  auto* bottom_layout = new QVBoxLayout(bottom);
  bottom_layout->setContentsMargins(0, 0, 0, 0);
  auto* top_row = new QHBoxLayout;
  top_row->addWidget(new QLabel(tr("Top sites by"), bottom));
  top_box_ = new QComboBox(bottom);
  top_box_->addItem(tr("peak contribution"), static_cast<int>(SiteOrder::peak));
  top_box_->addItem(tr("allocations"), static_cast<int>(SiteOrder::calls));
  top_box_->addItem(tr("temporary allocations"), static_cast<int>(SiteOrder::temporaries));
  top_box_->addItem(tr("bytes allocated"), static_cast<int>(SiteOrder::bytes));
  top_row->addWidget(top_box_);
  top_row->addStretch(1);
  bottom_layout->addLayout(top_row);
  top_model_ = new TopSitesModel(this);
  top_view_ = newTreeView(bottom);
  top_view_->setRootIsDecorated(false);
  top_view_->setModel(top_model_);
  top_view_->header()->setSectionResizeMode(TopSitesModel::site, QHeaderView::Stretch);
  bottom_layout->addWidget(top_view_);
  split->addWidget(tree_);
  split->addWidget(bottom);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  layout->addWidget(split, 1);

  connect(direction_box_, &QComboBox::currentIndexChanged, this, [this](int i) {
    setDirection(i == 0 ? TreeDirection::bottom_up : TreeDirection::top_down);
  });
  connect(filter_, &QLineEdit::textChanged, this, &CallTreeView::setFilter);
  connect(top_box_, &QComboBox::currentIndexChanged, this,
          [this](int i) { setTopOrder(static_cast<SiteOrder>(top_box_->itemData(i).toInt())); });
}

void CallTreeView::setSession(std::shared_ptr<const Session> session) {
  trees_->clear();
  session_ = std::move(session);
  range_.reset();
  ready_ = false;
  model_->setTree(nullptr);
  top_model_->setAnalysis(nullptr, top_model_->order());
  heading_->setText(session_ ? tr("Loading...") : tr("No trace loaded"));
}

void CallTreeView::setRange(std::uint64_t t0, std::uint64_t t1,
                            std::shared_ptr<const Analysis> range) {
  range_ = std::move(range);
  t0_ = t0;
  t1_ = t1;
  ready_ = false;
  top_model_->setAnalysis(range_, top_model_->order());
  top_view_->resizeColumnToContents(TopSitesModel::calls);
  for (int c = TopSitesModel::calls; c < TopSitesModel::site; ++c)
    top_view_->resizeColumnToContents(c);
  if (!range_) return;
  heading_->setText(tr("Building the call tree..."));
  buildTree();
}

void CallTreeView::buildTree() {
  ready_ = false;
  const TreeDirection d = direction_;
  trees_->request(range_, d, this,
                  [this, d, a = std::weak_ptr(range_)](std::shared_ptr<const CallTree> t) {
                    if (a.lock() == range_ && d == direction_) showTree(std::move(t));
                  });
}

void CallTreeView::showTree(std::shared_ptr<const CallTree> tree) {
  model_->setTree(std::move(tree));
  // Self columns say "allocated by this function itself": bottom-up that is
  // the first level's inclusive cost, so only top-down shows them.
  for (int c = CallTreeModel::peak; c < CallTreeModel::location; ++c)
    tree_->setColumnHidden(
        c, CallTreeModel::isSelfColumn(c) && direction_ == TreeDirection::bottom_up);
  expandHeaviest();
  // After expanding: the top level alone ("[malloc]") has no location.
  for (int c = CallTreeModel::peak; c <= CallTreeModel::location; ++c)
    tree_->resizeColumnToContents(c);
  heading_->setText(headingText());
  ready_ = true;
  emit ready();
}

// Opens the heaviest path (by the sort column's order: the first row at each
// level) a few levels deep, so the tab answers its question at first sight.
void CallTreeView::expandHeaviest() {
  QModelIndex at = model_->index(0, 0);
  for (int depth = 0; at.isValid() && depth < 12; ++depth) {
    tree_->expand(at);
    at = model_->index(0, 0, at);
  }
  if (model_->rowCount() > 0) tree_->setCurrentIndex(model_->index(0, 0));
}

void CallTreeView::setDirection(TreeDirection d) {
  if (d == direction_) return;
  direction_ = d;
  direction_box_->setCurrentIndex(d == TreeDirection::bottom_up ? 0 : 1);
  if (range_) buildTree();
}

void CallTreeView::setFilter(const QString& text) {
  if (filter_->text() != text) filter_->setText(text);  // comes back here through textChanged
  top_model_->setFilter(text);  // one box filters the tree and the top sites under it
  if (model_->filter() == text) return;
  model_->setFilter(text);
  // Matching rows sit at any depth: open the filtered tree, bounded.
  if (!text.isEmpty() && model_->tree()) {
    int opened = 0;
    std::vector<QModelIndex> todo{QModelIndex()};
    while (!todo.empty() && opened < 500) {
      QModelIndex at = todo.back();
      todo.pop_back();
      for (int r = 0; r < model_->rowCount(at); ++r) {
        QModelIndex child = model_->index(r, 0, at);
        if (model_->matches(model_->node(child))) continue;  // its subtree stays shut
        tree_->expand(child);
        ++opened;
        todo.push_back(child);
      }
    }
  }
}

void CallTreeView::setTopOrder(SiteOrder order) {
  for (int i = 0; i < top_box_->count(); ++i)
    if (top_box_->itemData(i).toInt() == static_cast<int>(order)) top_box_->setCurrentIndex(i);
  if (top_model_->order() != order) top_model_->setAnalysis(range_, order);
}

bool CallTreeView::showSite(SiteId site) {
  const CallTree* t = model_->tree();
  if (!t || !range_ || site.value >= range_->sites.size()) return false;
  const std::uint32_t node = find_site_node(*t, *range_, at(range_->sites, site));
  if (node == TreeNode::kNone || !model_->isVisible(node)) return false;
  std::vector<std::uint32_t> path;  // the root's child first
  for (std::uint32_t n = node; n != CallTree::kRoot; n = t->nodes[n].parent) path.push_back(n);
  QModelIndex index;
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    index = model_->indexOfNode(*it);  // builds the rows above first
    if (*it != node) tree_->expand(index);
  }
  tree_->setCurrentIndex(index);
  tree_->scrollTo(index);
  return true;
}

QString CallTreeView::headingText() const {
  if (!range_ || !model_->tree()) return heading_->text();
  const TreeCosts& t = model_->tree()->total();
  const Summary& whole = session_ ? session_->whole().summary : range_->summary;
  const bool all = t0_ <= whole.first_event_ns && t1_ >= whole.last_event_ns;
  const QString span =
      all ? tr("the whole trace") : tr("%1 – %2").arg(durationText(t0_), durationText(t1_));
  return tr("Call tree of %1: %2 allocations (%3 temporary), %4 allocated, %5 live at the peak, "
            "%6 leaked.")
      .arg(span, countText(t[TreeCost::allocations]), countText(t[TreeCost::temporary]),
           bytesText(t[TreeCost::bytes]), bytesText(t[TreeCost::peak]),
           bytesText(t[TreeCost::leaked]));
}

}  // namespace memtrail::gui
