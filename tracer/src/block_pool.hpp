// Memory for per-thread event buffers, taken with mmap so the recorder never
// calls malloc on the hot path (it runs inside a malloc interposer).
//
// A Block is a fixed-size run of raw events that one program thread appends
// to and the writer thread consumes. The owner publishes bytes with a release
// store of `used`; when the block is full it links a fresh one via `next`
// (after its final `used` store), so a reader that sees `next` knows `used`
// is final. Blocks go back to a free list that program threads pop from under
// a spin lock: the only synchronisation a program thread ever does.
//
// Blocks given back beyond the first kWarmBlocks free ones are released
// (MADV_DONTNEED, all but their first page) and kept mapped in a cold list
// for reuse: a burst (eight threads writing faster than the drain: up to
// ~40 blocks, 5 MiB) no longer stays in the program's RSS once drained.
#pragma once

#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

namespace memtrail::runtime {

// The tracer's own mappings, by system call: not through the preload's mmap
// interposer, which would take them for the program's (a signal handler's,
// while the recorder appends: handler_queue.hpp).
inline void* map_anonymous(std::size_t bytes) noexcept {
  long m = ::syscall(SYS_mmap, nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
  return m < 0 && m > -4096 ? nullptr : reinterpret_cast<void*>(m);
}

// Held for a few instructions, but its holder can be preempted: with more
// runnable threads than cores (hundreds of threads registering at once) a
// pure spin burnt whole time slices, so a waiter yields its core after a
// short spin.
class SpinLock {
 public:
  void lock() noexcept {
    for (int spins = 0; flag_.test_and_set(std::memory_order_acquire);)
      while (flag_.test(std::memory_order_relaxed)) {
        if (++spins < 64)
          __builtin_ia32_pause();
        else
          sched_yield();
      }
  }
  void unlock() noexcept { flag_.clear(std::memory_order_release); }

 private:
  std::atomic_flag flag_ = ATOMIC_FLAG_INIT;
};

struct Block {
  // Mapping size, header included. The backlog bound and a drain pass are
  // counted in blocks (recorder.cpp, drain_pass.cpp). 32 KiB blocks held
  // less per thread (GuestParity.Shape12 ~4 MiB less) but made the 300
  // threads of samples/threads wait on the backlog bound so often that more
  // of them were allocating at once: the program's own peak rose from ~31 MB
  // to ~110 MB (memtrail_check.threads). A tracer must not change that.
  static constexpr std::size_t kBytes = 128 * 1024;

  std::atomic<Block*> next{nullptr};
  std::atomic<std::uint32_t> used{0};
  Block* free_next = nullptr;

  unsigned char* data() noexcept { return reinterpret_cast<unsigned char*>(this + 1); }
  static constexpr std::uint32_t capacity() noexcept {
    return static_cast<std::uint32_t>(kBytes - sizeof(Block));
  }
};

class BlockPool {
 public:
  // Free blocks kept resident for reuse; 1 MiB. A single-threaded program
  // cycles through fewer: its blocks are never released (no page faults on
  // its hot path); past them a block given back costs one madvise (the
  // drain's thread) and its reuse ~31 page faults, once per 128 KiB.
  static constexpr std::uint64_t kWarmBlocks = 8;

  // Never returns nullptr unless the system is out of address space.
  Block* get() noexcept {
    lock_.lock();
    Block* b = pop_locked();
    lock_.unlock();
    if (!b) {
      void* p = map_anonymous(Block::kBytes);
      if (p == nullptr) return nullptr;
      mapped_.fetch_add(1, std::memory_order_relaxed);
      return new (p) Block;
    }
    b->next.store(nullptr, std::memory_order_relaxed);
    b->used.store(0, std::memory_order_relaxed);
    return b;
  }
  // Like get(), but nullptr while `max_out` blocks are out (mapped and not
  // in the free list): the caller drains or waits for the writer to give
  // blocks back instead (backpressure).
  Block* get_bounded(std::uint64_t max_out) noexcept {
    lock_.lock();
    if (blocks_out() >= max_out) {
      lock_.unlock();
      return nullptr;
    }
    Block* b = pop_locked();
    lock_.unlock();
    if (!b) return get();
    b->next.store(nullptr, std::memory_order_relaxed);
    b->used.store(0, std::memory_order_relaxed);
    return b;
  }
  void put(Block* b) noexcept {
    // Decided before the lock (the system call must not run under it): a
    // race only moves the count of warm blocks by one or two.
    bool release = warm_count_.load(std::memory_order_relaxed) >= kWarmBlocks;
    if (release) release_body(b);
    lock_.lock();
    Block*& list = release ? cold_ : free_;
    b->free_next = list;
    list = b;
    if (!release)
      warm_count_.store(warm_count_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    free_count_.store(free_count_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    lock_.unlock();
  }
  // Blocks out: being written or waiting for a drain. Exact under lock_;
  // without it a racy estimate, good enough to decide whether to drain.
  std::uint64_t blocks_out() const {
    std::uint64_t free = free_count_.load(std::memory_order_relaxed);
    std::uint64_t mapped = mapped_.load(std::memory_order_relaxed);
    return mapped > free ? mapped - free : 0;
  }

  // fork(): held across it so the child's copy of the free list is consistent.
  void lock() noexcept { lock_.lock(); }
  void unlock() noexcept { lock_.unlock(); }

 private:
  // Warm blocks first: a cold one faults its pages in again as it fills.
  Block* pop_locked() noexcept {
    Block* b = free_;
    if (b) {
      free_ = b->free_next;
      warm_count_.store(warm_count_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    } else if ((b = cold_)) {
      cold_ = b->free_next;
    }
    if (b)
      free_count_.store(free_count_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    return b;
  }

  // The block's pages past the first (which holds its header) go back to
  // the system; they read as zeros when touched again. By system call, as
  // the mapping was made: not the preload's interposer.
  static void release_body(Block* b) noexcept {
    constexpr std::size_t kPage = 4096;
    ::syscall(SYS_madvise, reinterpret_cast<unsigned char*>(b) + kPage, Block::kBytes - kPage,
              MADV_DONTNEED);
  }

  SpinLock lock_;
  Block* free_ = nullptr;                     // warm: resident
  Block* cold_ = nullptr;                     // released: mapped, not resident
  std::atomic<std::uint64_t> warm_count_{0};  // changed under lock_, read anywhere
  std::atomic<std::uint64_t> free_count_{0};  // changed under lock_, read anywhere
  std::atomic<std::uint64_t> mapped_{0};
};

// Bump allocator over mmap'ed slabs for small objects that live until the
// process ends (per-thread state). Thread-safe, malloc-free.
class Arena {
 public:
  void* allocate(std::size_t bytes) noexcept {
    bytes = (bytes + 63) & ~std::size_t{63};
    lock_.lock();
    if (left_ < bytes) {
      std::size_t slab = bytes > kSlab ? bytes : kSlab;
      void* p = map_anonymous(slab);
      if (p == nullptr) {
        lock_.unlock();
        return nullptr;
      }
      next_ = static_cast<unsigned char*>(p);
      left_ = slab;
    }
    void* out = next_;
    next_ += bytes;
    left_ -= bytes;
    lock_.unlock();
    return out;
  }

 private:
  static constexpr std::size_t kSlab = 256 * 1024;
  SpinLock lock_;
  unsigned char* next_ = nullptr;
  std::size_t left_ = 0;
};

}  // namespace memtrail::runtime
