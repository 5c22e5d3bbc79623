#include "caller_callee_model.hpp"

#include <QFileInfo>
#include <algorithm>

#include "format.hpp"
#include "memtrail/site_filter.hpp"

namespace memtrail::gui {

namespace {

bool isBytesCost(TreeCost c) {
  return c == TreeCost::peak || c == TreeCost::leaked || c == TreeCost::bytes;
}

}  // namespace

CallerCalleeModel::CallerCalleeModel(Rows rows, QObject* parent)
    : QAbstractTableModel(parent), rows_(rows) {}

void CallerCalleeModel::show(std::shared_ptr<const CallerCallee> data, std::uint32_t of) {
  beginResetModel();
  data_ = std::move(data);
  of_ = data_ && of < data_->functions.size() ? of : CallerCallee::kNone;
  rebuild();
  endResetModel();
}

void CallerCalleeModel::setFilter(const QString& text) {
  if (text == filter_) return;
  beginResetModel();
  filter_ = text;
  rebuild();
  endResetModel();
}

// The rows of the current data, filtered and sorted (no reset signals).
void CallerCalleeModel::rebuild() {
  shown_.clear();
  if (!data_) return;
  if (rows_ == Rows::functions) {
    const SiteFilter filter = SiteFilter::search_box(filter_.toStdString());
    for (std::uint32_t i = 0; i < data_->functions.size(); ++i) {
      const FunctionCosts& f = data_->functions[i];
      if (filter.matches(f.symbol)) shown_.push_back({i, &f.inclusive, &f.self});
    }
  } else if (of_ != CallerCallee::kNone) {
    const FunctionCosts& f = data_->functions[of_];
    for (const CallEdge& e : rows_ == Rows::callers ? f.callers : f.callees)
      shown_.push_back({e.function, &e.inclusive, &e.self});
  }
  const int column = sort_column_;
  auto key = [&](const Row& r) -> std::uint64_t {
    return (isSelfColumn(column) ? *r.self : *r.inclusive)[costOf(column)];
  };
  auto name = [&](const Row& r) -> const std::string& {
    return data_->functions[r.function].symbol.name;
  };
  auto less = [&](const Row& a, const Row& b) {
    if (isCostColumn(column) && key(a) != key(b)) return key(a) < key(b);
    if (column == location && locationText(a.function) != locationText(b.function))
      return locationText(a.function) < locationText(b.function);
    return name(a) < name(b);
  };
  std::stable_sort(shown_.begin(), shown_.end(), [&](const Row& a, const Row& b) {
    return sort_order_ == Qt::DescendingOrder ? less(b, a) : less(a, b);
  });
}

std::uint32_t CallerCalleeModel::functionAt(int row) const {
  if (row < 0 || row >= static_cast<int>(shown_.size())) return CallerCallee::kNone;
  return shown_[static_cast<std::size_t>(row)].function;
}

int CallerCalleeModel::rowOf(std::uint32_t function) const {
  for (std::size_t r = 0; r < shown_.size(); ++r)
    if (shown_[r].function == function) return static_cast<int>(r);
  return -1;
}

std::uint64_t CallerCalleeModel::cost(int row, int column) const {
  if (row < 0 || row >= static_cast<int>(shown_.size()) || !isCostColumn(column)) return 0;
  const Row& r = shown_[static_cast<std::size_t>(row)];
  return (isSelfColumn(column) ? *r.self : *r.inclusive)[costOf(column)];
}

int CallerCalleeModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(shown_.size());
}

int CallerCalleeModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : column_count;
}

QString CallerCalleeModel::locationText(std::uint32_t function) const {
  return symbolLocation(data_->functions[function].symbol);
}

QVariant CallerCalleeModel::data(const QModelIndex& index, int role) const {
  if (!data_ || !index.isValid() || index.row() >= static_cast<int>(shown_.size())) return {};
  const std::uint32_t f = shown_[static_cast<std::size_t>(index.row())].function;
  const TreeSymbol& s = data_->functions[f].symbol;
  if (role == kFunctionRole) return static_cast<qulonglong>(f);
  const int column = index.column();
  if (column == function || column == location) {
    if (role == Qt::ToolTipRole) return symbolToolTip(s);
    if (role != Qt::DisplayRole) return {};
    return column == function ? QString::fromStdString(s.name) : locationText(f);
  }
  const std::uint64_t v = cost(index.row(), column);
  const TreeCost c = costOf(column);
  if (role == kNumberRole) return static_cast<qulonglong>(v);
  if (role == kFractionRole) {
    const std::uint64_t total = data_->total[c];
    return total == 0 ? 0.0 : static_cast<double>(v) / static_cast<double>(total);
  }
  if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole) return {};
  if (v == 0) return QString();
  return isBytesCost(c) ? bytesText(v) : countText(v);
}

QVariant CallerCalleeModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= column_count) return {};
  if (role == Qt::DisplayRole) {
    if (section == function && rows_ == Rows::callers) return tr("Caller");
    if (section == function && rows_ == Rows::callees) return tr("Callee");
    return tr(columnName(section));
  }
  if (role != Qt::ToolTipRole || !isCostColumn(section)) return {};
  const bool self = isSelfColumn(section);
  switch (rows_) {
    case Rows::functions:
      return self ? tr("Allocated by the function itself (its frame innermost)")
                  : tr("From every stack through the function, each stack counted once "
                       "however often the function recurses in it");
    case Rows::callers:
      return self ? tr("Allocated by the selected function itself when called from this caller")
                  : tr("From the stacks where this caller calls the selected function");
    case Rows::callees:
      return self ? tr("Allocated by this callee itself when called from the selected function")
                  : tr("From the stacks where the selected function calls this callee");
  }
  return {};
}

void CallerCalleeModel::sort(int column, Qt::SortOrder order) {
  if (column < 0 || column >= column_count) return;
  beginResetModel();
  sort_column_ = column;
  sort_order_ = order;
  rebuild();
  endResetModel();
}

}  // namespace memtrail::gui
