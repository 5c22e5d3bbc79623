// Runs Session queries that may replay part of the file (segment_map,
// explain) on one thread off the GUI thread, newest request only: a request
// still waiting when a newer one comes is never run, and the result of one
// that finished after a newer request was made is dropped, so the view
// never shows a moment the user already left.
#pragma once

#include <QObject>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace memtrail::gui {

class SegmentWorker : public QObject {
  Q_OBJECT

 public:
  // Runs on the worker thread; returns what to do with its result on the
  // GUI thread.
  using Job = std::function<std::function<void()>()>;

  explicit SegmentWorker(QObject* parent = nullptr);
  ~SegmentWorker() override;  // waits for the running job

  void submit(Job job);
  // Requests made minus results delivered or dropped (GUI thread).
  bool busy() const { return delivered_ != submitted_; }
  std::uint64_t dropped() const { return dropped_; }

 private:
  void loop();

  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  Job pending_;
  std::uint64_t pending_generation_ = 0;
  bool stop_ = false;
  // GUI thread only.
  std::uint64_t submitted_ = 0, delivered_ = 0, dropped_ = 0;
};

}  // namespace memtrail::gui
