#include "top_sites_model.hpp"

#include "format.hpp"
#include "memtrail/site_caller.hpp"
#include "memtrail/site_filter.hpp"

namespace memtrail::gui {

TopSitesModel::TopSitesModel(QObject* parent) : QAbstractTableModel(parent) {}

void TopSitesModel::setAnalysis(std::shared_ptr<const Analysis> analysis, SiteOrder order,
                                std::size_t limit) {
  beginResetModel();
  analysis_ = std::move(analysis);
  order_ = order;
  limit_ = limit;
  rebuild();
  endResetModel();
}

void TopSitesModel::setFilter(const QString& text) {
  if (text == filter_) return;
  beginResetModel();
  filter_ = text;
  rebuild();
  endResetModel();
}

void TopSitesModel::rebuild() {
  rows_.clear();
  if (!analysis_) return;
  if (filter_.isEmpty()) {
    rows_ = top_sites(*analysis_, order_, limit_);
    return;
  }
  // The whole ranking, then the first `limit_` that match.
  const SiteFilter filter = SiteFilter::search_box(filter_.toStdString());
  for (SiteId id : top_sites(*analysis_, order_, 0)) {
    if (limit_ != 0 && rows_.size() >= limit_) break;
    if (filter.matches(at(analysis_->sites, id))) rows_.push_back(id);
  }
}

int TopSitesModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int TopSitesModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : column_count;
}

QVariant TopSitesModel::data(const QModelIndex& index, int role) const {
  if (!analysis_ || !index.isValid() || index.row() >= static_cast<int>(rows_.size())) return {};
  const SiteId id = rows_[static_cast<std::size_t>(index.row())];
  const Site& s = at(analysis_->sites, id);
  if (role == kSiteRole) return static_cast<qulonglong>(id.value);
  if (index.column() == site) {
    if (role == Qt::ToolTipRole) {
      QString stack;
      for (const Frame& f : s.frames) stack += QString::fromStdString(f.describe()) + "\n";
      return stack.trimmed();
    }
    if (role != Qt::DisplayRole) return {};
    // As `report`'s site_title: the caller, and the pool when there are several.
    QString where = QString::fromStdString(caller_text(s.frames));
    const PoolStats* p = analysis_->pool(s.pool);
    if (p && analysis_->pools.size() > 1)
      where += QStringLiteral("  [%1]").arg(QString::fromStdString(p->info.name));
    return where;
  }
  const std::uint64_t n = index.column() == calls       ? s.calls
                          : index.column() == allocated ? s.bytes_allocated
                          : index.column() == at_peak   ? s.peak_bytes
                                                        : s.temporaries;
  if (role == kNumberRole) return static_cast<qulonglong>(n);
  if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole) return {};
  return index.column() == allocated || index.column() == at_peak ? bytesText(n) : countText(n);
}

QVariant TopSitesModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* const names[] = {"Calls", "Allocated", "At peak", "Temporary", "Site"};
  return section >= 0 && section < column_count ? tr(names[section]) : QVariant();
}

}  // namespace memtrail::gui
