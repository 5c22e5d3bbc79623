#include "compare_model.hpp"

#include <QBrush>
#include <QColor>
#include <algorithm>

#include "format.hpp"
#include "memtrail/site_caller.hpp"
#include "memtrail/site_filter.hpp"

namespace memtrail::gui {

namespace {

constexpr QChar kMinus(0x2212);

qlonglong signedDelta(std::uint64_t a, std::uint64_t b) {
  return static_cast<qlonglong>(b - a);  // two's complement, as to_diff_json writes it
}

QString signedText(std::uint64_t a, std::uint64_t b, QString (*text)(std::uint64_t)) {
  if (a == b) return QStringLiteral("0");
  return (b > a ? QStringLiteral("+") : QString(kMinus)) + text(b > a ? b - a : a - b);
}

// Growth in red, shrinking in green: more memory is the thing to look at.
QVariant deltaColour(std::uint64_t a, std::uint64_t b) {
  if (a == b) return {};
  return QBrush(b > a ? QColor(190, 30, 30) : QColor(20, 130, 40));
}

// Display, tooltip and the numeric roles of one A/B cost cell.
QVariant costCell(std::uint64_t a, std::uint64_t b, bool bytes, int role) {
  auto text = bytes ? &bytesText : &countText;
  switch (role) {
    case Qt::DisplayRole:
      return signedText(a, b, text);
    case Qt::ToolTipRole:
      return QObject::tr("A %1 → B %2").arg(text(a), text(b));
    case Qt::ForegroundRole:
      return deltaColour(a, b);
    case Qt::TextAlignmentRole:
      return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    case CompareRoles::kNumberRole:
      return signedDelta(a, b);
    case CompareRoles::kARole:
      return static_cast<qulonglong>(a);
    case CompareRoles::kBRole:
      return static_cast<qulonglong>(b);
    default:
      return {};
  }
}

QVariant impactCell(std::uint64_t impact, int role) {
  if (role == Qt::DisplayRole) return bytesText(impact);
  if (role == CompareRoles::kNumberRole) return static_cast<qlonglong>(impact);
  if (role == Qt::TextAlignmentRole) return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

QString stackText(const FrameList& frames) {
  QString out;
  for (const Frame& f : frames) out += QString::fromStdString(f.describe()) + "\n";
  return out.isEmpty() ? QObject::tr("(no stack recorded)") : out.trimmed();
}

}  // namespace

QString signedBytesText(std::uint64_t a, std::uint64_t b) {
  return signedText(a, b, &bytesText);
}

QString signedCountText(std::uint64_t a, std::uint64_t b) {
  return signedText(a, b, &countText);
}

// ---------------------------------------------------------------- sites

CompareSitesModel::CompareSitesModel(QObject* parent) : QAbstractTableModel(parent) {}

void CompareSitesModel::setDiff(std::shared_ptr<const DiffResult> diff) {
  beginResetModel();
  diff_ = std::move(diff);
  rebuildRows();
  endResetModel();
}

void CompareSitesModel::setFilter(const QString& text) {
  if (text == filter_) return;
  beginResetModel();
  filter_ = text;
  rebuildRows();
  endResetModel();
}

const SiteDelta& CompareSitesModel::siteDelta(int row) const {
  return diff_->sites[rows_[static_cast<std::size_t>(row)]];
}

std::pair<std::uint64_t, std::uint64_t> CompareSitesModel::sides(const SiteDelta& s, int column) {
  switch (column) {
    case peak:
      return {s.peak_bytes[0], s.peak_bytes[1]};
    case leaked:
      return {s.leaked[0].bytes, s.leaked[1].bytes};
    case leaked_blocks:
      return {s.leaked[0].blocks, s.leaked[1].blocks};
    case calls:
      return {s.calls[0], s.calls[1]};
    case allocated:
      return {s.bytes_allocated[0], s.bytes_allocated[1]};
    default:
      return {0, 0};
  }
}

bool CompareSitesModel::matches(const SiteDelta& s) const {
  const SiteFilter filter = SiteFilter::search_box(filter_.toStdString());
  return holds_text(s.pool, filter.text, filter.letter_case) || filter.matches(s.frames);
}

void CompareSitesModel::rebuildRows() {
  rows_.clear();
  if (!diff_) return;
  for (std::size_t i = 0; i < diff_->sites.size(); ++i)
    if (matches(diff_->sites[i])) rows_.push_back(i);
  if (sort_column_ == impact && sort_order_ == Qt::DescendingOrder) return;  // the diff's order
  auto key = [this](std::size_t i) -> QVariant {
    const SiteDelta& s = diff_->sites[i];
    if (sort_column_ == site) return QString::fromStdString(caller_text(s.frames));
    if (sort_column_ == pool) return QString::fromStdString(s.pool);
    if (sort_column_ == impact) return static_cast<qlonglong>(s.impact);
    auto [a, b] = sides(s, sort_column_);
    return signedDelta(a, b);
  };
  const bool ascending = sort_order_ == Qt::AscendingOrder;
  std::stable_sort(rows_.begin(), rows_.end(), [&](std::size_t x, std::size_t y) {
    const QVariant kx = key(x), ky = key(y);
    const auto c = QVariant::compare(kx, ky);
    return ascending ? c == QPartialOrdering::Less : c == QPartialOrdering::Greater;
  });
}

void CompareSitesModel::sort(int column, Qt::SortOrder order) {
  beginResetModel();
  sort_column_ = column;
  sort_order_ = order;
  rebuildRows();
  endResetModel();
}

int CompareSitesModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int CompareSitesModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : column_count;
}

QVariant CompareSitesModel::data(const QModelIndex& index, int role) const {
  if (!diff_ || !index.isValid() || index.row() >= rowCount()) return {};
  const SiteDelta& s = siteDelta(index.row());
  switch (index.column()) {
    case site:
      if (role == Qt::DisplayRole) return QString::fromStdString(caller_text(s.frames));
      if (role == Qt::ToolTipRole) return stackText(s.frames);
      return {};
    case pool:
      return role == Qt::DisplayRole ? QString::fromStdString(s.pool) : QVariant();
    case impact:
      return impactCell(s.impact, role);
    default: {
      auto [a, b] = sides(s, index.column());
      const bool bytes = index.column() != leaked_blocks && index.column() != calls;
      return costCell(a, b, bytes, role);
    }
  }
}

QVariant CompareSitesModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  static const char* const kTitles[] = {
      "Site", "Pool", "Impact", "Δ Peak", "Δ Leaked", "Δ Leaked blocks", "Δ Calls", "Δ Allocated"};
  static const char* const kTips[] = {
      "The first frame outside the allocation machinery (the stack in the tooltip)",
      "The pool the site allocated from",
      "|Δ leaked bytes| + |Δ peak bytes|: the diff's order",
      "Bytes the site held at the trace's peak, B − A",
      "Bytes leaked, B − A",
      "Blocks leaked, B − A",
      "Allocations, B − A",
      "Bytes allocated over the range, B − A"};
  if (section < 0 || section >= column_count) return {};
  if (role == Qt::DisplayRole) return tr(kTitles[section]);
  if (role == Qt::ToolTipRole) return tr(kTips[section]);
  return {};
}

// ---------------------------------------------------------------- pools

ComparePoolsModel::ComparePoolsModel(QObject* parent) : QAbstractTableModel(parent) {}

void ComparePoolsModel::setDiff(std::shared_ptr<const DiffResult> diff) {
  beginResetModel();
  diff_ = std::move(diff);
  endResetModel();
}

std::pair<std::uint64_t, std::uint64_t> ComparePoolsModel::sides(const PoolDelta& p, int column) {
  switch (column) {
    case peak_used:
      return {p.peak_used_bytes[0], p.peak_used_bytes[1]};
    case peak_reserved:
      return {p.peak_reserved_bytes[0], p.peak_reserved_bytes[1]};
    case leaked:
      return {p.leaked_bytes[0], p.leaked_bytes[1]};
    case allocations:
      return {p.allocations[0], p.allocations[1]};
    default:
      return {0, 0};
  }
}

int ComparePoolsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !diff_ ? 0 : static_cast<int>(diff_->pools.size());
}

int ComparePoolsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : column_count;
}

QVariant ComparePoolsModel::data(const QModelIndex& index, int role) const {
  if (!diff_ || !index.isValid() || index.row() >= rowCount()) return {};
  const PoolDelta& p = poolDelta(index.row());
  switch (index.column()) {
    case pool:
      return role == Qt::DisplayRole ? QString::fromStdString(p.name) : QVariant();
    case present:
      if (role != Qt::DisplayRole) return {};
      return !p.present[0] ? tr("only in B") : !p.present[1] ? tr("only in A") : tr("both");
    case impact:
      return impactCell(p.impact, role);
    default: {
      auto [a, b] = sides(p, index.column());
      return costCell(a, b, index.column() != allocations, role);
    }
  }
}

QVariant ComparePoolsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* const kTitles[] = {
      "Pool", "In", "Impact", "Δ Peak used", "Δ Peak reserved", "Δ Leaked", "Δ Allocations"};
  return section >= 0 && section < column_count ? tr(kTitles[section]) : QVariant();
}

}  // namespace memtrail::gui
