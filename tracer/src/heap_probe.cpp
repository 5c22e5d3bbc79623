// The heap probe thread of heap_probe.hpp.
#include "heap_probe.hpp"

#include "runtime.hpp"

#include <malloc.h>
#include <pthread.h>

#include <chrono>
#include <system_error>

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

void HeapProbe::hold(int wait_ms) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, std::chrono::milliseconds(wait_ms), [&] { return !busy_; });
  lock.release();  // held until release()
}

void HeapProbe::release() {
  mutex_.unlock();
}

HeapProbe::Figures HeapProbe::read(int wait_ms) {
  std::unique_lock lock(mutex_);
  if (!thread_.joinable()) {
    try {
      thread_ = std::thread([this] { run(); });
    } catch (const std::exception&) {  // system_error, or bad_alloc for its state
      return last_;  // no room for a thread (ulimit -v): the samples carry the last figures
    }
  }
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
  t_internal = 1;  // never traced: its exit frees the thread's state (pause_threads stops it)
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
