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
// Free blocks beyond the first kWarmBlocks are released (MADV_DONTNEED, all
// but their first page) and kept mapped in a cold list for reuse, once they
// are not wanted again (BlockPool::trim, after each drain): a burst (eight
// threads writing faster than the drain: up to ~40 blocks, 5 MiB) no longer
// stays in the program's RSS once its threads ended or the blocks lay idle
// for 100 ms. Not while the drain is behind: blocks given back then are
// taken again at once, and a released one faults its 31 pages in again
// (tight-pairs, released at once: ~37,000 page faults a run, ~9 % of its
// traced cpu). With many live threads (kReleaseAllAtThreads) their own
// blocks are the bulk: then every drained block, and the part of a block
// the drain has read, goes back at once.
#pragma once

#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

#include "memtrail/detail/own_mappings.hpp"

namespace memtrail::runtime {

// The tracer's own mappings, by system call: not through the preload's mmap
// interposer, which would take them for the program's (a signal handler's,
// while the recorder appends: handler_queue.hpp).
inline void* map_anonymous(std::size_t bytes, detail::OwnPurpose purpose) noexcept {
  long m = ::syscall(SYS_mmap, nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
  if (m < 0 && m > -4096) return nullptr;
  detail::note_own_mapped(reinterpret_cast<void*>(m), bytes, purpose);
  return reinterpret_cast<void*>(m);
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
  // Free blocks kept resident once the backlog is drained; 1 MiB. Past
  // them a block given back costs one madvise (the drain's thread) and its
  // reuse ~31 page faults, once per 128 KiB.
  static constexpr std::uint64_t kWarmBlocks = 8;
  // The backlog counts as drained with at most this many blocks out beyond
  // the ones the live threads are writing.
  static constexpr std::uint64_t kDrainedSlack = 2;
  // A free block no get() needed for this long is released. Long against a
  // backlog's cycle (tight-pairs fills 25 blocks in ~10 ms), short against a
  // program's life.
  static constexpr std::uint64_t kIdlePeriodNs = 100'000'000;
  // With this many live threads their own blocks are most of the tracer's
  // memory (64 threads: 8 MiB, fully resident once the blocks cycle), so
  // every drained block is released, none kept warm: a thread's block is
  // then resident only as far as it has written it, and with release_read
  // below only as far as the drain has not read it (cross-thread-64: event
  // blocks at the process's peak 8.5 -> 2.6 MiB, medians of 3). Its price
  // is the page faults of writing a released block again (~1 us each on
  // this VM, one per 128 events of 32 bytes; cross-thread-64: ~6,000 more a
  // run, 20,000 -> 26,000), paid only here: with fewer threads the blocks
  // stay warm.
  static constexpr std::uint64_t kReleaseAllAtThreads = 32;

  // Never returns nullptr unless the system is out of address space.
  Block* get() noexcept {
    lock_.lock();
    Block* b = pop_locked();
    lock_.unlock();
    if (!b) {
      void* p = map_anonymous(Block::kBytes, detail::OwnPurpose::event_blocks);
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
  // A drained block back, resident (trim() releases the surplus).
  void put(Block* b) noexcept {
    lock_.lock();
    b->free_next = free_;
    free_ = b;
    warm_count_.store(warm_count_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    free_count_.store(free_count_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    lock_.unlock();
  }
  // After each drain (one caller at a time): releases the free blocks past
  // kWarmBlocks that are not wanted again. Either no get() needed them for
  // a whole kIdlePeriodNs (the fewest free blocks seen in that period, past
  // kWarmBlocks), or threads ended (`writing`, the live threads, fell) and
  // the backlog is drained (at most their blocks + kDrainedSlack out): the
  // demand that made the surplus went with them, so it goes at once.
  void trim(std::uint64_t writing, std::uint64_t now_ns) noexcept {
    threads_ended_ |= writing < last_writing_;
    last_writing_ = writing;
    lock_.lock();
    const std::uint64_t warm = warm_count_.load(std::memory_order_relaxed);
    std::uint64_t surplus = 0;
    const bool period_over = !period_open_ || now_ns - period_start_ns_ >= kIdlePeriodNs;
    if (period_over) {
      if (period_open_ && low_water_ > kWarmBlocks) surplus = low_water_ - kWarmBlocks;
      period_open_ = true;
      period_start_ns_ = now_ns;
    }
    if (threads_ended_ && blocks_out() <= writing + kDrainedSlack) {
      threads_ended_ = false;
      surplus = warm > kWarmBlocks ? warm - kWarmBlocks : 0;
    }
    if (writing >= kReleaseAllAtThreads) surplus = warm;
    Block* released = take_warm_locked(std::min(surplus, warm));
    // The low-water mark spans the whole period, not one drain pass.
    const std::uint64_t now_warm = warm_count_.load(std::memory_order_relaxed);
    low_water_ = period_over ? now_warm : std::min(low_water_, now_warm);
    lock_.unlock();
    if (released) release_to_cold(released);
  }
  // With kReleaseAllAtThreads live threads, the part of a thread's block
  // the drain has read (data [0, read)) goes back to the system a page at a
  // time, once kReleaseStep more of it is read than went back before
  // (`released`, returned updated): its owner writes only past `read`, and
  // with 64 threads the drain is behind, so a block is mostly read while its
  // owner is still filling it. A released page was to be released at put()
  // anyway (trim): this costs no page fault more, only an madvise per step.
  static constexpr std::uint32_t kReleaseStep = 32 * 1024;
  static std::uint32_t release_read(Block* b, std::uint32_t released, std::uint32_t read,
                                    std::uint64_t writing) noexcept {
    if (writing < kReleaseAllAtThreads || read < released + kReleaseStep) return released;
    constexpr std::uintptr_t kPage = 4096;
    auto base = reinterpret_cast<std::uintptr_t>(b->data());
    std::uintptr_t from = std::max((base + released + kPage - 1) & ~(kPage - 1),
                                   reinterpret_cast<std::uintptr_t>(b) + kPage);
    std::uintptr_t to = (base + read) & ~(kPage - 1);
    if (to > from) ::syscall(SYS_madvise, from, to - from, MADV_DONTNEED);
    return read;
  }
  // Releases every warm free block: the exit scan, with every event
  // drained, is about to take its scratch (Session::release_scratch_if_asked).
  void release_warm() noexcept {
    lock_.lock();
    Block* released = take_warm_locked(warm_count_.load(std::memory_order_relaxed));
    low_water_ = 0;
    lock_.unlock();
    if (released) release_to_cold(released);
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
      std::uint64_t warm = warm_count_.load(std::memory_order_relaxed) - 1;
      warm_count_.store(warm, std::memory_order_relaxed);
      if (warm < low_water_) low_water_ = warm;
    } else if ((b = cold_)) {
      cold_ = b->free_next;
    }
    if (b)
      free_count_.store(free_count_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    return b;
  }

  // Up to `n` warm blocks off the free list (the most recently given back),
  // as a list; they still count as free.
  Block* take_warm_locked(std::uint64_t n) noexcept {
    Block* taken = nullptr;
    for (; n > 0 && free_; --n) {
      Block* b = free_;
      free_ = b->free_next;
      warm_count_.store(warm_count_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
      b->free_next = taken;
      taken = b;
    }
    return taken;
  }
  // Releases the blocks of `list` (system calls outside the lock) and adds
  // them to the cold list.
  void release_to_cold(Block* list) noexcept {
    Block* last = list;
    for (Block* b = list; b; b = b->free_next) {
      release_body(b);
      last = b;
    }
    lock_.lock();
    last->free_next = cold_;
    cold_ = list;
    lock_.unlock();
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
  std::uint64_t low_water_ = 0;               // fewest warm blocks this period (lock_)
  // trim()'s, one caller at a time:
  bool period_open_ = false;
  std::uint64_t period_start_ns_ = 0;
  std::uint64_t last_writing_ = 0;
  bool threads_ended_ = false;
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
      void* p = map_anonymous(slab, detail::OwnPurpose::thread_state);
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
