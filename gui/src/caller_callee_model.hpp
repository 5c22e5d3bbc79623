// The Caller/Callee tab's tables (memtrail/caller_callee.hpp), one model
// class for all three: the flat list of functions (heaptrack_gui's left
// table), and the callers or the callees of one function, each row with the
// call tree's five costs, inclusive and self, sortable, drawn with bars.
//
//   functions: a function's inclusive and self costs;
//   callers:   per caller C of F, the edge C -> F's costs (inclusive: the
//              stacks through the edge; self: those ending in F);
//   callees:   per callee G of F, the edge F -> G's.
// The filter (function list only) is the GUI's one rule (memtrail/site_filter.hpp,
// SiteFilter::search_box).
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <cstdint>
#include <memory>
#include <vector>

#include "memtrail/caller_callee.hpp"
#include "tree_cost_columns.hpp"

namespace memtrail::gui {

class CallerCalleeModel : public QAbstractTableModel, public TreeCostColumns {
  Q_OBJECT

 public:
  enum class Rows { functions, callers, callees };
  // The Call tree tab's columns (TreeCostColumns); kFractionRole: cost /
  // the range's total.
  static constexpr int kFunctionRole = Qt::UserRole + 2;  // index into CallerCallee::functions

  explicit CallerCalleeModel(Rows rows, QObject* parent = nullptr);

  // `of`: the function whose callers or callees to list (ignored for the
  // function list; CallerCallee::kNone lists nothing). Keeps the filter and
  // the sort order.
  void show(std::shared_ptr<const CallerCallee> data, std::uint32_t of = CallerCallee::kNone);
  const CallerCallee* result() const { return data_.get(); }
  std::uint32_t of() const { return of_; }
  Rows rows() const { return rows_; }
  void setFilter(const QString& text);  // the function list only
  QString filter() const { return filter_; }

  std::uint32_t functionAt(int row) const;  // CallerCallee::kNone when out of range
  int rowOf(std::uint32_t function) const;  // -1 when not listed
  std::uint64_t cost(int row, int column) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
  void sort(int column, Qt::SortOrder order) override;

 private:
  struct Row {
    std::uint32_t function;
    const TreeCosts* inclusive;
    const TreeCosts* self;
  };
  void rebuild();
  QString locationText(std::uint32_t function) const;

  const Rows rows_;
  std::shared_ptr<const CallerCallee> data_;
  std::uint32_t of_ = CallerCallee::kNone;
  QString filter_;
  int sort_column_ = peak;
  Qt::SortOrder sort_order_ = Qt::DescendingOrder;
  std::vector<Row> shown_;
};

}  // namespace memtrail::gui
