// The Call tree tab's model: the analyzer's CallTree (memtrail/call_tree.hpp,
// top-down or bottom-up) as a QAbstractItemModel with one column per cost,
// inclusive and self, sortable, and a filter by function, file or module
// that keeps the matching rows, their ancestors and their descendants.
//
// Rows are built lazily: the children of a node are filtered and sorted the
// first time the view asks for them, so a tree of 10^5 nodes costs nothing
// until its rows are expanded.
#pragma once

#include <QAbstractItemModel>
#include <QString>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "memtrail/call_tree.hpp"
#include "tree_cost_columns.hpp"

namespace memtrail::gui {

class CallTreeModel : public QAbstractItemModel, public TreeCostColumns {
  Q_OBJECT

 public:
  // kFractionRole: cost / the tree's total.
  static constexpr int kNodeRole = Qt::UserRole + 2;  // index into CallTree::nodes

  explicit CallTreeModel(QObject* parent = nullptr);

  // null: empty model. Keeps the filter and the sort order.
  void setTree(std::shared_ptr<const CallTree> tree);
  const CallTree* tree() const { return tree_.get(); }
  // Case-insensitive substring of a node's function name, source file or
  // module; empty shows every row.
  void setFilter(const QString& text);
  QString filter() const { return filter_; }
  // Whether a node passes the filter (true for every node without one).
  bool isVisible(std::uint32_t node) const;
  bool matches(std::uint32_t node) const;  // the node itself matches the filter

  std::uint32_t node(const QModelIndex& index) const;  // TreeNode::kNone for invalid
  // The index of `node` in column 0 (building its ancestors' rows); invalid
  // for the root or a filtered-out node.
  QModelIndex indexOfNode(std::uint32_t node) const;

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  bool hasChildren(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
  void sort(int column, Qt::SortOrder order) override;

 private:
  const std::vector<std::uint32_t>& rows(std::uint32_t node) const;
  std::uint64_t cost(std::uint32_t node, int column) const;
  QString locationText(std::uint32_t node) const;
  void computeVisible();

  std::shared_ptr<const CallTree> tree_;
  QString filter_;
  std::vector<std::uint8_t> match_, visible_;  // by node; empty: no filter
  int sort_column_ = peak;
  Qt::SortOrder sort_order_ = Qt::DescendingOrder;
  // Children of a node, filtered and sorted (built on first use), and each
  // node's row among its parent's.
  mutable std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> rows_;
  mutable std::vector<std::uint32_t> row_of_;
};

}  // namespace memtrail::gui
