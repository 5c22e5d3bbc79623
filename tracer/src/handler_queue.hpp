// Events made by a signal handler that interrupted the recorder on its own
// thread. The recorder's per-thread buffer is half-written at that moment,
// so such an event cannot be appended there; it waits in this queue and the
// interrupted recorder appends it (without a stack) before it returns. Only
// the thread and its handlers touch a queue: one producer (the handler),
// one consumer (the thread, after the handler returned), ordered by signal
// fences. Async-signal-safe: the storage is mapped with a raw mmap on first
// use, never freed (one mapping per thread that was ever interrupted so).
#pragma once

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "runtime.hpp"

namespace memtrail::runtime {

struct QueuedEvent {
  RawHead head;
  RawTail tail;
  bool has_tail;
};

class HandlerQueue {
 public:
  static constexpr std::uint32_t kCapacity = 8192;  // ~0.5 MiB, mapped on first use

  // In the handler. False when full (the event is then lost, and counted).
  bool push(const QueuedEvent& e) {
    if (slots_ == nullptr && !map()) return false;
    std::uint32_t tail = tail_.load(std::memory_order_relaxed);
    if (tail - head_.load(std::memory_order_relaxed) >= kCapacity) return false;
    slots_[tail % kCapacity] = e;
    tail_.store(tail + 1, std::memory_order_release);
    return true;
  }
  bool empty() const {
    return head_.load(std::memory_order_relaxed) == tail_.load(std::memory_order_acquire);
  }
  // On the thread, outside the handler: the oldest event, or false.
  bool pop(QueuedEvent& out) {
    std::uint32_t head = head_.load(std::memory_order_relaxed);
    if (head == tail_.load(std::memory_order_acquire)) return false;
    out = slots_[head % kCapacity];
    head_.store(head + 1, std::memory_order_release);
    return true;
  }

 private:
  bool map() {
    long m = syscall(SYS_mmap, nullptr, sizeof(QueuedEvent) * kCapacity, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m < 0 && m > -4096) return false;
    slots_ = reinterpret_cast<QueuedEvent*>(m);
    detail::note_own_mapped(slots_, sizeof(QueuedEvent) * kCapacity,
                            detail::OwnPurpose::thread_state);
    return true;
  }
  QueuedEvent* slots_ = nullptr;
  std::atomic<std::uint32_t> head_{0}, tail_{0};
};

}  // namespace memtrail::runtime
