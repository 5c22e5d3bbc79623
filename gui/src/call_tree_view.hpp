// Call tree tab: "which code allocates this memory?" for the window's range.
// The analyzer's call tree (memtrail/call_tree.hpp) of the range's Analysis,
// bottom-up (the allocating function first, its callers below) or top-down
// (from main), in a QTreeView with sortable inclusive and self cost columns
// drawn with bars, a filter box by function, file or module, and under it
// the report's top-site lists (peak, allocations, temporary, bytes).
//
// The tree comes from the window's CallTreeCache, shared with the Flame
// graph tab: built off the GUI thread once per range and direction (the
// other direction when first asked for); ready() follows.
#pragma once

#include <memory>

#include "memtrail/call_tree.hpp"
#include "memtrail/gui/session_view.hpp"

class QComboBox;
class QLabel;
class QLineEdit;
class QTreeView;

namespace memtrail::gui {

class CallTreeCache;
class CallTreeModel;
class TopSitesModel;

class CallTreeView : public SessionView {
  Q_OBJECT

 public:
  // `trees` is shared with the other tabs that draw the range's call tree;
  // null: the view keeps its own.
  explicit CallTreeView(CallTreeCache* trees = nullptr, QWidget* parent = nullptr);

  void setSession(std::shared_ptr<const Session> session) override;
  void setRange(std::uint64_t t0, std::uint64_t t1, std::shared_ptr<const Analysis> range) override;
  bool isReady() const override { return ready_; }

  // Which tree is shown; switching builds the other one if needed (ready()
  // follows once it is in place).
  void setDirection(TreeDirection d);
  TreeDirection direction() const { return direction_; }
  void setFilter(const QString& text);
  void setTopOrder(SiteOrder order);
  // Opens and selects the tree row where a site's path ends (a click on a
  // top site). False when the tree is not built or hides it (the filter).
  bool showSite(SiteId site);

  CallTreeModel* model() const { return model_; }
  TopSitesModel* topSites() const { return top_model_; }
  QTreeView* tree() const { return tree_; }
  QString headingText() const;

 private:
  void buildTree();
  void showTree(std::shared_ptr<const CallTree> tree);
  void expandHeaviest();

  CallTreeCache* trees_ = nullptr;
  std::shared_ptr<const Session> session_;
  std::shared_ptr<const Analysis> range_;
  std::uint64_t t0_ = 0, t1_ = 0;
  TreeDirection direction_ = TreeDirection::bottom_up;
  bool ready_ = false;
  QLabel* heading_ = nullptr;
  QComboBox* direction_box_ = nullptr;
  QLineEdit* filter_ = nullptr;
  QComboBox* top_box_ = nullptr;
  CallTreeModel* model_ = nullptr;
  QTreeView* tree_ = nullptr;
  TopSitesModel* top_model_ = nullptr;
  QTreeView* top_view_ = nullptr;
};

}  // namespace memtrail::gui
