// CallTreeCache: the range's call trees, built once and shared by the tabs
// that draw them (the Call tree and Flame graph tabs). A tree is built off
// the GUI thread the first time a tab asks for it (one per Analysis and
// direction); a tab asking for one being built waits for the same build, and
// one asking for a built tree gets it at once. A new Analysis (a new range
// or trace) drops the trees of the old one.
//
//   cache->request(range, TreeDirection::top_down, this,
//                  [this](std::shared_ptr<const CallTree> t) { show(t); });
#pragma once

#include <QObject>
#include <QPointer>
#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "background.hpp"
#include "memtrail/call_tree.hpp"

namespace memtrail::gui {

class CallTreeCache : public QObject {
  Q_OBJECT

 public:
  using Done = std::function<void(std::shared_ptr<const CallTree>)>;
  explicit CallTreeCache(QObject* parent = nullptr) : QObject(parent) {}

  // Calls `done` on the GUI thread with the tree of `analysis` in direction
  // `d`: at once when it is built, else when its build ends. Not called if
  // `receiver` is gone by then, or if a request for another Analysis in the
  // same direction came first (that range superseded this one).
  void request(std::shared_ptr<const Analysis> analysis, TreeDirection d, QObject* receiver,
               Done done);
  // The built tree, or null when it is not built (yet).
  std::shared_ptr<const CallTree> tree(const Analysis* analysis, TreeDirection d) const;
  // Drops every tree and cancels the builds (the trace was closed).
  void clear();
  // How many trees this cache has built: a tab switch or a second tab
  // asking for the same tree does not add one.
  std::size_t builds() const { return builds_; }

 private:
  struct Waiter {
    QPointer<QObject> receiver;
    Done done;
  };
  struct Entry {
    std::shared_ptr<const Analysis> analysis;
    std::shared_ptr<const CallTree> tree;  // null while building
    std::vector<Waiter> waiters;
  };
  void built(TreeDirection d, std::shared_ptr<const CallTree> tree);

  std::array<Entry, 2> entries_;  // by TreeDirection
  std::array<BackgroundTasks, 2> builders_;
  std::size_t builds_ = 0;
};

}  // namespace memtrail::gui
