// The heap probe thread of heap_probe.hpp.
#include "heap_probe.hpp"

#include <malloc.h>
#include <pthread.h>

#include <chrono>

#include "memtrail/detail/signals.hpp"

namespace memtrail::runtime {

void HeapProbe::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
  stop_ = false;  // a later read() starts it again
}

HeapProbe::Figures HeapProbe::read(int wait_ms) {
  std::unique_lock lock(mutex_);
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  // A probe still inside an earlier call is stuck on an arena lock: asking
  // again would only wait for it.
  if (busy_) return last_;
  const std::uint64_t before = readings_;
  asked_ = true;
  changed_.notify_all();
  changed_.wait_for(lock, std::chrono::milliseconds(wait_ms), [&] { return readings_ != before; });
  return last_;
}

void HeapProbe::run() {
  pthread_setname_np(pthread_self(), "memtrail-heap");
  detail::t_recorder_thread = true;
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return asked_ || stop_; });
    if (stop_) return;
    asked_ = false;
    busy_ = true;
    lock.unlock();
    struct mallinfo2 mi = ::mallinfo2();
    lock.lock();
    busy_ = false;
    last_ = {mi.uordblks + mi.hblkhd, mi.arena + mi.hblkhd};
    ++readings_;
    changed_.notify_all();
  }
}

}  // namespace memtrail::runtime
