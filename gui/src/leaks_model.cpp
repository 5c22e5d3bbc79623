#include "leaks_model.hpp"

#include <QFileInfo>
#include <algorithm>

#include "format.hpp"
#include "memtrail/site_caller.hpp"
#include "memtrail/site_filter.hpp"

namespace memtrail::gui {

namespace {

std::uint64_t leakedBytes(const Site& s) {
  return s.direct.bytes + s.indirect.bytes;
}

}  // namespace

std::size_t labelFrame(const FrameList& frames) {
  return first_caller_frame(frames);  // the analyzer's rule, as `report`'s caller lines
}

namespace {

// A Python program's sites are labelled by native code (the interpreter's,
// a library's): the innermost Python frame at or past the label frame is
// what its author wrote, so the label names it too, "file.py:line".
std::size_t pythonCallerFrame(const FrameList& frames, std::size_t from) {
  for (std::size_t i = from; i < frames.size(); ++i)
    if (is_python_frame(frames[i].address) && !frames[i].file.empty()) return i;
  return frames.size();
}

QString pythonCaller(const FrameList& frames, std::size_t from) {
  const std::size_t i = pythonCallerFrame(frames, from);
  if (i == frames.size()) return {};
  const Frame& f = frames[i];
  const QString file = QFileInfo(QString::fromStdString(f.file)).fileName();
  return QStringLiteral("%1 (%2:%3)").arg(QString::fromStdString(f.function), file).arg(f.line);
}

// The frame a row stands for (its source shown below): the label frame, or
// the Python frame its label names when the label frame has no source file.
std::size_t rowFrame(const FrameList& frames) {
  const std::size_t at = labelFrame(frames);
  if (at >= frames.size() || !frames[at].file.empty()) return at;
  const std::size_t python = pythonCallerFrame(frames, at);
  return python < frames.size() ? python : at;
}

QString labelText(const Site& s) {
  if (s.frames.empty()) return QObject::tr("(no stack recorded)");
  const std::size_t at = labelFrame(s.frames);
  QString text = QString::fromStdString(s.frames[at].describe());
  if (is_python_frame(s.frames[at].address)) return text;
  const QString caller = pythonCaller(s.frames, at);
  return caller.isEmpty() ? text : text + QStringLiteral("  \u2190 ") + caller;
}

}  // namespace

LeaksModel::LeaksModel(QObject* parent) : QAbstractItemModel(parent) {}

void LeaksModel::setAnalysis(std::shared_ptr<const Analysis> analysis) {
  beginResetModel();
  analysis_ = std::move(analysis);
  all_.clear();
  if (analysis_) {
    for (const LeakSite& l : analysis_->leaks.sites)
      if (std::find(all_.begin(), all_.end(), l.site) == all_.end() &&
          l.site.value < analysis_->sites.size())
        all_.push_back(l.site);
    const auto& sites = analysis_->sites;
    std::stable_sort(all_.begin(), all_.end(), [&](SiteId a, SiteId b) {
      const Site &x = at(sites, a), &y = at(sites, b);
      if (leakedBytes(x) != leakedBytes(y)) return leakedBytes(x) > leakedBytes(y);
      return x.reachable.bytes > y.reachable.bytes;
    });
  }
  refilter();
  endResetModel();
}

void LeaksModel::setFilter(const QString& text) {
  if (text == filter_) return;
  beginResetModel();
  filter_ = text;
  refilter();
  endResetModel();
}

void LeaksModel::refilter() {
  rows_.clear();
  const SiteFilter filter = SiteFilter::search_box(filter_.toStdString());
  for (SiteId id : all_)
    if (filter.matches(at(analysis_->sites, id))) rows_.push_back(id);
}

std::uint64_t LeaksModel::number(const Site& s, int column) const {
  switch (column) {
    case direct_bytes:
      return s.direct.bytes;
    case direct_blocks:
      return s.direct.blocks;
    case indirect_bytes:
      return s.indirect.bytes;
    case indirect_blocks:
      return s.indirect.blocks;
    case possible_bytes:
      return s.possible.bytes;
    case possible_blocks:
      return s.possible.blocks;
    case reachable_bytes:
      return s.reachable.bytes;
    case reachable_blocks:
      return s.reachable.blocks;
    default:
      return 0;
  }
}

// Top-level rows have internal id 0; a frame row carries its site row + 1.
QModelIndex LeaksModel::index(int row, int column, const QModelIndex& parent) const {
  if (row < 0 || column < 0 || column >= column_count) return {};
  if (!parent.isValid())
    return row < static_cast<int>(rows_.size()) ? createIndex(row, column, quintptr{0})
                                                : QModelIndex();
  if (parent.internalId() != 0 || parent.row() >= static_cast<int>(rows_.size())) return {};
  if (row >= static_cast<int>(site(parent.row()).frames.size())) return {};
  return createIndex(row, column, static_cast<quintptr>(parent.row() + 1));
}

QModelIndex LeaksModel::parent(const QModelIndex& child) const {
  if (!child.isValid() || child.internalId() == 0) return {};
  return createIndex(static_cast<int>(child.internalId() - 1), 0, quintptr{0});
}

int LeaksModel::rowCount(const QModelIndex& parent) const {
  if (!parent.isValid()) return static_cast<int>(rows_.size());
  if (parent.internalId() != 0 || parent.column() != 0) return 0;
  return static_cast<int>(site(parent.row()).frames.size());
}

int LeaksModel::columnCount(const QModelIndex&) const {
  return column_count;
}

const Frame* LeaksModel::frame(const QModelIndex& index) const {
  if (!index.isValid()) return nullptr;
  if (index.internalId() == 0) {
    const Site& s = site(index.row());
    return s.frames.empty() ? nullptr : &s.frames[rowFrame(s.frames)];
  }
  const Site& s = site(static_cast<int>(index.internalId() - 1));
  return &s.frames[static_cast<std::size_t>(index.row())];
}

QVariant LeaksModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid()) return {};
  if (index.internalId() == 0) return rowData(index.row(), index.column(), role);
  return frameData(static_cast<int>(index.internalId() - 1), index.row(), index.column(), role);
}

QVariant LeaksModel::rowData(int row, int column, int role) const {
  const Site& s = site(row);
  if (role == kSiteRole) return static_cast<qulonglong>(rows_[row].value);
  if (role == kFrameRole) return static_cast<qulonglong>(rowFrame(s.frames));
  if (column == location) {
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
    return labelText(s);
  }
  const std::uint64_t n = number(s, column);
  if (role == kNumberRole) return static_cast<qulonglong>(n);
  if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole) return {};
  if (n == 0) return QString();
  const bool bytes = column == direct_bytes || column == indirect_bytes ||
                     column == possible_bytes || column == reachable_bytes;
  return bytes ? bytesText(n) : countText(n);
}

QVariant LeaksModel::frameData(int row, int frame, int column, int role) const {
  const Site& s = site(row);
  if (role == kSiteRole) return static_cast<qulonglong>(rows_[row].value);
  if (role == kFrameRole) return frame;
  if (column != location || (role != Qt::DisplayRole && role != Qt::ToolTipRole)) return {};
  const Frame& f = s.frames[static_cast<std::size_t>(frame)];
  QString text = QString::fromStdString(f.describe());  // says "(inlined)" itself
  if (role == Qt::ToolTipRole && !f.module.empty())
    text += QStringLiteral("\n%1").arg(QString::fromStdString(f.module));
  return text;
}

QVariant LeaksModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* const names[] = {"Leak site",       "Direct",          "Direct blocks",
                                      "Indirect",        "Indirect blocks", "Possible",
                                      "Possible blocks", "Reachable",       "Reachable blocks"};
  return section >= 0 && section < column_count ? tr(names[section]) : QVariant();
}

void LeaksModel::sort(int column, Qt::SortOrder order) {
  if (!analysis_ || column < 0 || column >= column_count) return;
  beginResetModel();
  const auto& sites = analysis_->sites;
  auto less = [&](SiteId a, SiteId b) {
    if (column != location) return number(at(sites, a), column) < number(at(sites, b), column);
    return labelText(at(sites, a)) < labelText(at(sites, b));
  };
  std::stable_sort(all_.begin(), all_.end(), [&](SiteId a, SiteId b) {
    return order == Qt::DescendingOrder ? less(b, a) : less(a, b);
  });
  refilter();
  endResetModel();
}

}  // namespace memtrail::gui
