// The Compare tab's tables: the analyzer's diff of two traces
// (memtrail/diff.hpp, diff_analyses: the function `memtrail diff` runs) as
// two Qt table models, one row per changed site (matched by pool and
// symbolized stack) and one per pool. Each cost column shows B − A, signed;
// the raw A and B figures are in kARole / kBRole, the signed delta in
// kNumberRole, so what the table shows is exactly `memtrail diff --json`.
//
// Sites are sortable by any column (default: the diff's impact order) and
// filtered by a case-insensitive substring of any frame's function, file or
// module, or of the pool name.
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "memtrail/diff.hpp"

namespace memtrail::gui {

// "+1.20 KiB", "−512 B", "0" for bytes; "+3", "−1,204" for counts.
QString signedBytesText(std::uint64_t a, std::uint64_t b);
QString signedCountText(std::uint64_t a, std::uint64_t b);

// Roles shared by both models' cost columns.
struct CompareRoles {
  static constexpr int kNumberRole = Qt::UserRole;  // B − A as qlonglong (impact: impact)
  static constexpr int kARole = Qt::UserRole + 1;   // A's figure, qulonglong
  static constexpr int kBRole = Qt::UserRole + 2;   // B's figure, qulonglong
};

class CompareSitesModel : public QAbstractTableModel, public CompareRoles {
  Q_OBJECT

 public:
  enum Column { site, pool, impact, peak, leaked, leaked_blocks, calls, allocated, column_count };

  explicit CompareSitesModel(QObject* parent = nullptr);
  // null: empty. Keeps the filter and the sort order.
  void setDiff(std::shared_ptr<const DiffResult> diff);
  const DiffResult* diff() const { return diff_.get(); }
  void setFilter(const QString& text);
  QString filter() const { return filter_; }
  // The diff's site behind a row (rows are filtered and sorted).
  const SiteDelta& siteDelta(int row) const;
  // A and B of a cost column for one site; {0, 0} for site and pool.
  static std::pair<std::uint64_t, std::uint64_t> sides(const SiteDelta& s, int column);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
  void sort(int column, Qt::SortOrder order) override;

 private:
  bool matches(const SiteDelta& s) const;
  void rebuildRows();

  std::shared_ptr<const DiffResult> diff_;
  QString filter_;
  int sort_column_ = impact;
  Qt::SortOrder sort_order_ = Qt::DescendingOrder;
  std::vector<std::size_t> rows_;  // indexes into diff_->sites
};

class ComparePoolsModel : public QAbstractTableModel, public CompareRoles {
  Q_OBJECT

 public:
  enum Column {
    pool,
    present,
    impact,
    peak_used,
    peak_reserved,
    leaked,
    allocations,
    column_count
  };

  explicit ComparePoolsModel(QObject* parent = nullptr);
  void setDiff(std::shared_ptr<const DiffResult> diff);
  const PoolDelta& poolDelta(int row) const { return diff_->pools[static_cast<std::size_t>(row)]; }
  static std::pair<std::uint64_t, std::uint64_t> sides(const PoolDelta& p, int column);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  std::shared_ptr<const DiffResult> diff_;
};

}  // namespace memtrail::gui
