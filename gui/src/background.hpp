// Work off the GUI thread for the main window and the views: a Session query
// runs on its own thread and its result comes back to the owner's thread.
//
//   tasks_.run<Breakdown>([s, t](const auto& wanted) { return s->breakdown(t); },
//                         [this](Breakdown b) { show(b); });
//
// A later run() supersedes an earlier one: the earlier result is dropped and
// its `wanted()` turns false (pass it to a Session progress callback to
// cancel). The destructor cancels everything and waits for the threads, so a
// result never reaches a destroyed owner.
#pragma once

#include <QMetaObject>
#include <QObject>
#include <QPointer>
#include <QThread>
#include <atomic>
#include <functional>
#include <memory>
#include <vector>

namespace memtrail::gui {

class BackgroundTasks : public QObject {
 public:
  using Wanted = std::function<bool()>;
  explicit BackgroundTasks(QObject* parent = nullptr) : QObject(parent) {}
  ~BackgroundTasks() override;

  template <class T>
  void run(std::function<T(const Wanted&)> work, std::function<void(T)> done) {
    const std::uint64_t generation = ++generation_;
    auto wanted = [this, generation] { return generation_.load() == generation; };
    start([this, work = std::move(work), done = std::move(done), wanted, generation] {
      auto result = std::make_shared<T>(work(wanted));
      QMetaObject::invokeMethod(
          this,
          [done, result, generation, this] {
            if (generation_.load() == generation) done(std::move(*result));
          },
          Qt::QueuedConnection);
    });
  }
  // Drops the pending result and cancels the running work.
  void cancel() { ++generation_; }
  // Whether a thread of an earlier run() is still working.
  bool busy() const;

 private:
  void start(std::function<void()> body);
  std::atomic<std::uint64_t> generation_{0};
  std::vector<QPointer<QThread>> threads_;
};

}  // namespace memtrail::gui
