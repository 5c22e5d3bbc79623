// Caller/Callee tab (heaptrack_gui's): on the left every function of the
// window's range with its inclusive and self costs (sortable, a filter box
// by function, file or module); on the right the callers and the callees of
// the selected function, each with the costs of its call edge
// (caller_callee_model.hpp). A double click on a caller or callee selects
// that function, so the user walks the call graph up and down.
//
// The analyzer's build_caller_callee (memtrail/caller_callee.hpp) runs off
// the GUI thread once per range; ready() follows. A new range keeps the
// selected function when the range has it.
#pragma once

#include <memory>

#include "background.hpp"
#include "memtrail/caller_callee.hpp"
#include "memtrail/gui/session_view.hpp"

class QLabel;
class QLineEdit;
class QTreeView;

namespace memtrail::gui {

class CallerCalleeModel;

class CallerCalleeView : public SessionView {
  Q_OBJECT

 public:
  explicit CallerCalleeView(QWidget* parent = nullptr);

  void setSession(std::shared_ptr<const Session> session) override;
  void setRange(std::uint64_t t0, std::uint64_t t1, std::shared_ptr<const Analysis> range) override;
  bool isReady() const override { return ready_; }

  void setFilter(const QString& text);
  // Selects a function (index into the range's CallerCallee::functions) in
  // the list, clearing the filter if it hides it, and lists its callers and
  // callees. False when there is no such function.
  bool selectFunction(std::uint32_t function);
  bool selectFunction(const QString& name);
  std::uint32_t selectedFunction() const;  // CallerCallee::kNone when none

  CallerCalleeModel* functions() const { return functions_; }
  CallerCalleeModel* callers() const { return callers_; }
  CallerCalleeModel* callees() const { return callees_; }
  QTreeView* functionView() const { return function_view_; }
  QTreeView* callerView() const { return caller_view_; }
  QTreeView* calleeView() const { return callee_view_; }
  QString headingText() const;
  QString selectedText() const;

 private:
  void build();
  void showResult(std::shared_ptr<const CallerCallee> result);
  void showEdges(std::uint32_t function);
  void followEdge(CallerCalleeModel* model, int row);

  BackgroundTasks builder_;  // one build at a time; a new range supersedes it
  std::shared_ptr<const Session> session_;
  std::shared_ptr<const Analysis> range_;
  std::shared_ptr<const CallerCallee> result_;  // of range_, once built
  std::uint64_t t0_ = 0, t1_ = 0;
  bool ready_ = false;
  QString kept_name_;  // the selected function's name, kept across ranges
  QLabel* heading_ = nullptr;
  QLineEdit* filter_ = nullptr;
  CallerCalleeModel* functions_ = nullptr;
  CallerCalleeModel* callers_ = nullptr;
  CallerCalleeModel* callees_ = nullptr;
  QTreeView* function_view_ = nullptr;
  QTreeView* caller_view_ = nullptr;
  QTreeView* callee_view_ = nullptr;
  QLabel* selected_ = nullptr;
};

}  // namespace memtrail::gui
