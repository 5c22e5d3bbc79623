// Locks for the pools' short critical sections. An uncontended
// std::(recursive_)mutex costs two atomic read-modify-writes per lock/unlock
// pair plus two calls into libpthread; these cost one compare-and-swap to
// lock and a plain release store to unlock. Waiters spin on a plain load
// (test-and-test-and-set), pause, and yield after a while: the holder may be
// inside the upstream (mmap, cudaMalloc), which can take long.
//
// While the process has a single thread (glibc's __libc_single_threaded,
// the flag its own malloc uses to skip its arena locks) the lock word is
// written with plain stores: a locked instruction would first drain the
// store buffer, which after a pool operation's dozens of stat stores costs
// more than the operation. The word is still written, so a thread created
// while the lock is held (from a callback) waits for it; pthread_create
// orders those stores before the new thread starts, and the flag never
// turns true again once a second thread has existed.
#pragma once

#include <atomic>
#include <thread>

#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define MEMTRAIL_SINGLE_THREADED() (__libc_single_threaded != 0)
#else
#define MEMTRAIL_SINGLE_THREADED() false
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace memtrail::alloc::detail {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Waits until `word` is seen equal to `free_value`; the caller retries its CAS.
template <typename T>
[[gnu::noinline]] void spin_wait(const std::atomic<T>& word, T free_value) noexcept {
  for (int spins = 0; word.load(std::memory_order_relaxed) != free_value; ++spins) {
    if (spins < 64)
      cpu_relax();
    else
      std::this_thread::yield();
  }
}

// BfcPool: nothing it calls under the lock comes back into the pool.
class SpinLock {
 public:
  void lock() noexcept {
    if (MEMTRAIL_SINGLE_THREADED()) {
      locked_.store(true, std::memory_order_relaxed);
      return;
    }
    while (locked_.exchange(true, std::memory_order_acquire)) spin_wait(locked_, false);
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

// CachingPool: the free-memory callbacks run with the pool locked and may
// call back into it (free, empty_cache), as with c10's recursive mutex. The
// owner is identified by the address of a thread-local byte.
class RecursiveSpinLock {
 public:
  void lock() noexcept {
    const void* me = self();
    if (MEMTRAIL_SINGLE_THREADED()) {
      // No other thread: the owner is nobody or this thread.
      if (owner_.load(std::memory_order_relaxed) == me)
        ++depth_;
      else
        owner_.store(me, std::memory_order_relaxed);
      return;
    }
    const void* expected = nullptr;
    while (!owner_.compare_exchange_weak(expected, me, std::memory_order_acquire,
                                         std::memory_order_relaxed)) {
      if (expected == me) {
        ++depth_;  // only the owner touches depth_
        return;
      }
      spin_wait(owner_, static_cast<const void*>(nullptr));
      expected = nullptr;
    }
  }
  void unlock() noexcept {
    if (depth_ > 0) {
      --depth_;
      return;
    }
    owner_.store(nullptr, std::memory_order_release);
  }

 private:
  static const void* self() noexcept {
    static thread_local char tag;
    return &tag;
  }
  std::atomic<const void*> owner_{nullptr};
  int depth_ = 0;
};

}  // namespace memtrail::alloc::detail
