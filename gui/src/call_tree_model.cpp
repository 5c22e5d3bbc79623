#include "call_tree_model.hpp"

#include <QFileInfo>
#include <QFont>
#include <algorithm>

#include "format.hpp"
#include "memtrail/site_filter.hpp"

namespace memtrail::gui {

namespace {

bool isBytesCost(TreeCost c) {
  return c == TreeCost::peak || c == TreeCost::leaked || c == TreeCost::bytes;
}

}  // namespace

CallTreeModel::CallTreeModel(QObject* parent) : QAbstractItemModel(parent) {}

void CallTreeModel::setTree(std::shared_ptr<const CallTree> tree) {
  beginResetModel();
  tree_ = std::move(tree);
  rows_.clear();
  row_of_.assign(tree_ ? tree_->nodes.size() : 0, 0);
  computeVisible();
  endResetModel();
}

void CallTreeModel::setFilter(const QString& text) {
  if (text == filter_) return;
  beginResetModel();
  filter_ = text;
  rows_.clear();
  computeVisible();
  endResetModel();
}

// A node matches when its symbol's name, file or module holds the text
// (SiteFilter::search_box, the rule of every filter box);
// visible when it, an ancestor or a descendant matches. Nodes are stored
// parents first, so one backward pass marks ancestors and one forward pass
// marks descendants.
void CallTreeModel::computeVisible() {
  match_.clear();
  visible_.clear();
  if (!tree_ || filter_.isEmpty()) return;
  const SiteFilter filter = SiteFilter::search_box(filter_.toStdString());
  std::vector<std::uint8_t> symbol_match(tree_->symbols.size());
  for (std::size_t i = 0; i < tree_->symbols.size(); ++i)
    symbol_match[i] = filter.matches(tree_->symbols[i]);
  const auto& nodes = tree_->nodes;
  match_.assign(nodes.size(), 0);
  std::vector<std::uint8_t> down(nodes.size(), 0), up(nodes.size(), 0);
  for (std::size_t n = 1; n < nodes.size(); ++n) match_[n] = symbol_match[nodes[n].symbol];
  for (std::size_t n = nodes.size(); n-- > 1;)
    if ((down[n] |= match_[n])) down[nodes[n].parent] = 1;
  for (std::size_t n = 1; n < nodes.size(); ++n) up[n] = match_[n] || up[nodes[n].parent];
  visible_.resize(nodes.size());
  for (std::size_t n = 0; n < nodes.size(); ++n) visible_[n] = down[n] || up[n];
  visible_[CallTree::kRoot] = 1;
}

bool CallTreeModel::isVisible(std::uint32_t node) const {
  return visible_.empty() || (node < visible_.size() && visible_[node]);
}

bool CallTreeModel::matches(std::uint32_t node) const {
  return !match_.empty() && node < match_.size() && match_[node];
}

std::uint64_t CallTreeModel::cost(std::uint32_t node, int column) const {
  // Self is inclusive less the children's: O(children), only for shown cells.
  return (isSelfColumn(column) ? tree_->self(node) : tree_->nodes[node].inclusive)[costOf(column)];
}

const std::vector<std::uint32_t>& CallTreeModel::rows(std::uint32_t node) const {
  auto it = rows_.find(node);
  if (it != rows_.end()) return it->second;
  std::vector<std::uint32_t> kids;
  for (std::uint32_t c = tree_->nodes[node].first_child; c != TreeNode::kNone;
       c = tree_->nodes[c].next_sibling)
    if (isVisible(c)) kids.push_back(c);
  const int column = sort_column_;
  auto less = [&](std::uint32_t a, std::uint32_t b) {
    if (isCostColumn(column) && cost(a, column) != cost(b, column))
      return cost(a, column) < cost(b, column);
    if (column == location && locationText(a) != locationText(b))
      return locationText(a) < locationText(b);
    return tree_->name(a) < tree_->name(b);
  };
  std::stable_sort(kids.begin(), kids.end(), [&](std::uint32_t a, std::uint32_t b) {
    return sort_order_ == Qt::DescendingOrder ? less(b, a) : less(a, b);
  });
  for (std::size_t r = 0; r < kids.size(); ++r) row_of_[kids[r]] = static_cast<std::uint32_t>(r);
  return rows_.emplace(node, std::move(kids)).first->second;
}

std::uint32_t CallTreeModel::node(const QModelIndex& index) const {
  return index.isValid() ? static_cast<std::uint32_t>(index.internalId()) : TreeNode::kNone;
}

QModelIndex CallTreeModel::indexOfNode(std::uint32_t node) const {
  if (!tree_ || node == CallTree::kRoot || node >= tree_->nodes.size() || !isVisible(node))
    return {};
  rows(tree_->nodes[node].parent);  // sets row_of_[node]
  return createIndex(static_cast<int>(row_of_[node]), 0, static_cast<quintptr>(node));
}

QModelIndex CallTreeModel::index(int row, int column, const QModelIndex& parent) const {
  if (!tree_ || row < 0 || column < 0 || column >= column_count) return {};
  const std::uint32_t p = parent.isValid() ? node(parent) : CallTree::kRoot;
  const auto& kids = rows(p);
  if (row >= static_cast<int>(kids.size())) return {};
  return createIndex(row, column, static_cast<quintptr>(kids[static_cast<std::size_t>(row)]));
}

QModelIndex CallTreeModel::parent(const QModelIndex& child) const {
  if (!tree_ || !child.isValid()) return {};
  const std::uint32_t p = tree_->nodes[node(child)].parent;
  if (p == CallTree::kRoot || p == TreeNode::kNone) return {};
  return createIndex(static_cast<int>(row_of_[p]), 0, static_cast<quintptr>(p));
}

int CallTreeModel::rowCount(const QModelIndex& parent) const {
  if (!tree_ || (parent.isValid() && parent.column() != 0)) return 0;
  return static_cast<int>(rows(parent.isValid() ? node(parent) : CallTree::kRoot).size());
}

bool CallTreeModel::hasChildren(const QModelIndex& parent) const {
  if (!tree_ || (parent.isValid() && parent.column() != 0)) return false;
  const std::uint32_t p = parent.isValid() ? node(parent) : CallTree::kRoot;
  for (std::uint32_t c = tree_->nodes[p].first_child; c != TreeNode::kNone;
       c = tree_->nodes[c].next_sibling)
    if (isVisible(c)) return true;
  return false;
}

int CallTreeModel::columnCount(const QModelIndex&) const {
  return column_count;
}

QString CallTreeModel::locationText(std::uint32_t node) const {
  return symbolLocation(tree_->symbols[tree_->nodes[node].symbol]);
}

QVariant CallTreeModel::data(const QModelIndex& index, int role) const {
  if (!tree_ || !index.isValid()) return {};
  const std::uint32_t n = node(index);
  const TreeSymbol& s = tree_->symbols[tree_->nodes[n].symbol];
  if (role == kNodeRole) return static_cast<qulonglong>(n);
  const int column = index.column();
  if (column == function || column == location) {
    if (role == Qt::FontRole && s.pool) {
      QFont bold;
      bold.setBold(true);
      return bold;
    }
    if (role == Qt::ToolTipRole) return symbolToolTip(s);
    if (role != Qt::DisplayRole) return {};
    return column == function ? QString::fromStdString(s.name) : locationText(n);
  }
  const std::uint64_t v = cost(n, column);
  const TreeCost c = costOf(column);
  if (role == kNumberRole) return static_cast<qulonglong>(v);
  if (role == kFractionRole) {
    const std::uint64_t total = tree_->total()[c];
    return total == 0 ? 0.0 : static_cast<double>(v) / static_cast<double>(total);
  }
  if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole) return {};
  if (v == 0) return QString();
  return isBytesCost(c) ? bytesText(v) : countText(v);
}

QVariant CallTreeModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  static const char* const tips[] = {
      "The function, as `memtrail export --format folded` names it",
      "Bytes live at the peak of used memory, from this call path",
      "Bytes live at the peak, allocated by this function itself",
      "Allocations from this call path",
      "Allocations made by this function itself",
      "Temporary allocations (freed with no other allocation by the thread in between)",
      "Temporary allocations made by this function itself",
      "Bytes still live at the end of the trace (direct + indirect leaks)",
      "Leaked bytes allocated by this function itself",
      "Bytes allocated from this call path",
      "Bytes allocated by this function itself",
      "Source file and line (or module) of the function's first frame"};
  if (section < 0 || section >= column_count) return {};
  if (role == Qt::DisplayRole) return tr(columnName(section));
  if (role == Qt::ToolTipRole) return tr(tips[section]);
  return {};
}

void CallTreeModel::sort(int column, Qt::SortOrder order) {
  if (column < 0 || column >= column_count) return;
  beginResetModel();
  sort_column_ = column;
  sort_order_ = order;
  rows_.clear();
  endResetModel();
}

}  // namespace memtrail::gui
