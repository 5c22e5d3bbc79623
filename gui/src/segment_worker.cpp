#include "segment_worker.hpp"

#include <QMetaObject>

namespace memtrail::gui {

SegmentWorker::SegmentWorker(QObject* parent) : QObject(parent) {}

SegmentWorker::~SegmentWorker() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    pending_ = nullptr;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void SegmentWorker::submit(Job job) {
  const std::uint64_t generation = ++submitted_;
  {
    std::lock_guard lock(mutex_);
    // A job not started yet is replaced: its result would be dropped anyway.
    if (pending_) ++delivered_, ++dropped_;
    pending_ = std::move(job);
    pending_generation_ = generation;
  }
  if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
  wake_.notify_one();
}

void SegmentWorker::loop() {
  for (;;) {
    Job job;
    std::uint64_t generation = 0;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stop_ || pending_; });
      if (stop_) return;
      job = std::move(pending_);
      pending_ = nullptr;
      generation = pending_generation_;
    }
    std::function<void()> deliver = job();
    // Queued to this object: the destructor joins this thread first, and
    // Qt drops events posted to an object that is gone.
    QMetaObject::invokeMethod(
        this,
        [this, generation, deliver = std::move(deliver)] {
          ++delivered_;
          if (generation != submitted_) {
            ++dropped_;
            return;
          }
          if (deliver) deliver();
        },
        Qt::QueuedConnection);
  }
}

}  // namespace memtrail::gui
