#include "call_tree_cache.hpp"

#include <utility>

namespace memtrail::gui {

namespace {

constexpr std::size_t index(TreeDirection d) {
  return static_cast<std::size_t>(d);
}

}  // namespace

void CallTreeCache::request(std::shared_ptr<const Analysis> analysis, TreeDirection d,
                            QObject* receiver, Done done) {
  if (!analysis) return;
  Entry& e = entries_[index(d)];
  if (e.analysis == analysis && e.tree) return done(e.tree);
  if (e.analysis == analysis) {  // its build is running: wait for it
    e.waiters.push_back({receiver, std::move(done)});
    return;
  }
  // Another range: its trees go (the other direction's too, once asked for).
  e = Entry{analysis, nullptr, {}};
  e.waiters.push_back({receiver, std::move(done)});
  Entry& other = entries_[1 - index(d)];
  if (other.analysis && other.analysis != analysis) {
    builders_[1 - index(d)].cancel();
    other = Entry{};
  }
  builders_[index(d)].run<std::shared_ptr<const CallTree>>(
      [analysis, d](const BackgroundTasks::Wanted& wanted) {
        return std::make_shared<const CallTree>(build_call_tree(*analysis, d, wanted));
      },
      [this, d](std::shared_ptr<const CallTree> tree) { built(d, std::move(tree)); });
}

void CallTreeCache::built(TreeDirection d, std::shared_ptr<const CallTree> tree) {
  Entry& e = entries_[index(d)];
  e.tree = std::move(tree);
  ++builds_;
  // A waiter may ask for the other direction (which can drop nothing of
  // this entry: same Analysis), so take the list first.
  auto waiters = std::move(e.waiters);
  e.waiters.clear();
  const std::shared_ptr<const CallTree> shared = e.tree;
  for (Waiter& w : waiters)
    if (w.receiver) w.done(shared);
}

void CallTreeCache::clear() {
  for (auto& b : builders_) b.cancel();
  entries_ = {};
}

std::shared_ptr<const CallTree> CallTreeCache::tree(const Analysis* analysis,
                                                    TreeDirection d) const {
  const Entry& e = entries_[index(d)];
  return e.analysis.get() == analysis ? e.tree : nullptr;
}

}  // namespace memtrail::gui
