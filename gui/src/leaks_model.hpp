// The Leaks tab's model: one row per leak site of the range's Analysis
// (Leaks::sites, leaf pools) with its direct, indirect, possible and reachable bytes
// and blocks, labelled by its first frame outside the allocation machinery
// (and, for a Python program, the innermost Python frame past it:
// "... ← train_step (train.py:36)"); the children of a row are the site's
// symbolized frames, innermost first, Python frames among the native ones.
// Sorted by leaked (direct + indirect) bytes, then reachable bytes; a filter
// keeps the sites with a frame of that function, file or module.
#pragma once

#include <QAbstractItemModel>
#include <QString>
#include <cstdint>
#include <memory>
#include <vector>

#include "memtrail/analysis.hpp"

namespace memtrail::gui {

// Index of the frame that names a site: the analyzer's first_caller_frame
// (memtrail/site_caller.hpp), the first frame outside the allocation
// machinery (malloc, operator new, std::allocator, libc internals, ...).
std::size_t labelFrame(const FrameList& frames);

class LeaksModel : public QAbstractItemModel {
  Q_OBJECT

 public:
  enum Column {
    location,
    direct_bytes,
    direct_blocks,
    indirect_bytes,
    indirect_blocks,
    possible_bytes,  // Valgrind's possibly lost: only interior pointers reach them
    possible_blocks,
    reachable_bytes,
    reachable_blocks,
    column_count
  };
  static constexpr int kNumberRole = Qt::UserRole;    // the raw number of a count column
  static constexpr int kSiteRole = Qt::UserRole + 1;  // index into Analysis::sites
  static constexpr int kFrameRole =
      Qt::UserRole + 2;  // frame index (children; on rows the label frame, or the
                         // Python frame the label names when that has no file)

  explicit LeaksModel(QObject* parent = nullptr);
  // null: empty model.
  void setAnalysis(std::shared_ptr<const Analysis> analysis);
  const Analysis* analysis() const { return analysis_.get(); }
  // Keeps the sites with a frame whose function, file or module holds
  // `text` (any case); empty: every leak site.
  void setFilter(const QString& text);
  // Leak sites of the analysis, shown or filtered out.
  int siteCount() const { return static_cast<int>(all_.size()); }
  // The frame a row or child stands for (null for an invalid index).
  const Frame* frame(const QModelIndex& index) const;

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
  void sort(int column, Qt::SortOrder order) override;

 private:
  const Site& site(int row) const { return at(analysis_->sites, rows_[row]); }
  std::uint64_t number(const Site& s, int column) const;
  QVariant rowData(int row, int column, int role) const;
  QVariant frameData(int row, int frame, int column, int role) const;
  void refilter();  // rows_: the sites of all_ that match filter_, in all_'s order

  std::shared_ptr<const Analysis> analysis_;
  std::vector<SiteId> all_;   // every leak site, in the sort order
  std::vector<SiteId> rows_;  // those shown
  QString filter_;
};

}  // namespace memtrail::gui
