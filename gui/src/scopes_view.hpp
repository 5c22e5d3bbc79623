// memtrail-gui's Scopes tab: `memtrail report`'s SCOPES section for the
// window's range — one row per scope (entries, bytes escaped, the most one
// entry left behind, growth per entry, live at the end, workspace resets and
// spills), the selected scope's memory per iteration over time, and the
// sites that make it grow with their stacks. A filter box by function, file
// or module (memtrail/site_filter.hpp, SiteFilter::search_box) keeps the growth sites that match,
// and the scopes named by the text or grown by such a site. A trace (or range) without scopes says
// how to get them.
#pragma once

#include <QStringList>

#include "memtrail/gui/session_view.hpp"

class QLabel;
class QLineEdit;
class QTreeWidget;

namespace memtrail::gui {

class ScopesChart;

class ScopesView : public SessionView {
  Q_OBJECT

 public:
  explicit ScopesView(QWidget* parent = nullptr);

  void setSession(std::shared_ptr<const Session> session) override;
  void setRange(std::uint64_t t0, std::uint64_t t1, std::shared_ptr<const Analysis> range) override;
  bool isReady() const override { return true; }  // the Analysis holds everything

  // For tests. Columns: name, kind, pool, entries, escaped, max_escaped,
  // growth, live_at_end, resets, spills, spilled.
  static int columnIndex(const QString& name);
  int rowCount() const;
  QString cell(int row, int column) const;
  const ScopeStats* scope(int row) const;
  void selectRow(int row);
  // The growth sites of the selected scope: bytes per entry, live, where.
  int siteCount() const;
  QString siteCell(int row, int column) const;
  QString heading() const;
  bool showsEmptyState() const;
  void setFilter(const QString& text);
  QLineEdit* filter() const { return filter_; }
  bool rowHidden(int row) const;  // filtered out

 private:
  void fill();
  void showScope(int row);
  void applyFilter();
  bool scopeMatches(const ScopeStats& sc) const;

  std::shared_ptr<const Session> session_;
  std::shared_ptr<const Analysis> analysis_;
  std::uint64_t t0_ = 0, t1_ = 0;
  QLabel* heading_;
  QLineEdit* filter_;
  QLabel* empty_;  // the empty-state text, centred where the table would be
  QTreeWidget* table_;
  ScopesChart* chart_;
  QLabel* sites_label_;
  QTreeWidget* sites_;
};

}  // namespace memtrail::gui
