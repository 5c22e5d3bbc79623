// Leaks tab: the leak sites of the range (LeaksModel) in a tree, the totals
// above it with a filter by function, file or module, and the source of the
// selected site or frame beside it.
#pragma once

#include "memtrail/gui/session_view.hpp"

class QLabel;
class QLineEdit;
class QTreeView;

namespace memtrail::gui {

class LeaksModel;
class SourcePane;

class LeaksView : public SessionView {
  Q_OBJECT

 public:
  explicit LeaksView(QWidget* parent = nullptr);

  void setSession(std::shared_ptr<const Session> session) override;
  void setRange(std::uint64_t t0, std::uint64_t t1, std::shared_ptr<const Analysis> range) override;
  bool isReady() const override { return ready_; }

  LeaksModel* model() const { return model_; }
  QTreeView* tree() const { return tree_; }
  QLineEdit* filter() const { return filter_; }
  SourcePane* source() const { return source_; }
  QString totalsText() const;

 private:
  void showSelected();
  LeaksModel* model_ = nullptr;
  QTreeView* tree_ = nullptr;
  SourcePane* source_ = nullptr;
  QLabel* totals_ = nullptr;
  QLineEdit* filter_ = nullptr;
  bool ready_ = false;
};

}  // namespace memtrail::gui
