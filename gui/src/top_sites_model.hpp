// The Call tree tab's "Top sites" list: the sites `memtrail report` lists
// under TOP SITES BY PEAK CONTRIBUTION / ALLOCATIONS / TEMPORARY
// ALLOCATIONS / BYTES ALLOCATED (the analyzer's top_sites(), leaf pools),
// with the report's columns: calls, allocated, at peak, temporary, and the
// site named by its first frame outside the allocation machinery. A filter
// by function, file or module (memtrail/site_filter.hpp, SiteFilter::search_box) keeps the top
// sites among the matching ones, as `report --filter-function` ranks its kept sites.
#pragma once

#include <QAbstractTableModel>
#include <memory>
#include <vector>

#include "memtrail/analysis.hpp"

namespace memtrail::gui {

class TopSitesModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { calls, allocated, at_peak, temporary, site, column_count };
  static constexpr int kNumberRole = Qt::UserRole;    // raw number of a count column
  static constexpr int kSiteRole = Qt::UserRole + 1;  // index into Analysis::sites

  explicit TopSitesModel(QObject* parent = nullptr);
  // null: empty. At most `limit` rows (0 = every site with a nonzero key).
  void setAnalysis(std::shared_ptr<const Analysis> analysis, SiteOrder order,
                   std::size_t limit = 100);
  SiteOrder order() const { return order_; }
  // Empty: no filter. Kept across setAnalysis.
  void setFilter(const QString& text);
  QString filter() const { return filter_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  std::shared_ptr<const Analysis> analysis_;
  SiteOrder order_ = SiteOrder::peak;
  std::size_t limit_ = 100;
  QString filter_;
  std::vector<SiteId> rows_;

  void rebuild();
};

}  // namespace memtrail::gui
