// The project's one allocation-free set of block addresses, for the
// allocation hooks (late frees of ending threads, ld.so's blocks): a fixed
// array of kSlots, no allocation ever, lookups without a lock, a spin lock
// for inserts and removals. When full, inserts are dropped (insert returns
// false). Address 0 is never a member.
//
// Why not AddressTable (address_table.hpp): the hooks may not allocate nor
// map (they run inside malloc, before the recorder and in signal handlers),
// and lookups run concurrently with removals on other threads.
//
// Linear probing with backward-shift deletion, no tombstones: the erased
// slots of the earlier design filled the table over a long run of thread
// churn (one ld.so DTV per thread), until every free of the program probed
// all 16,384 slots. A removal moves members, which a lookup on another
// thread could step over: so writers make `version_` odd while they change
// the array, and a lookup that saw it change looks again. A lookup that
// interrupted the writer on its own thread (a signal handler) or that runs
// while the world is stopped (the exit scan) finds the writer still: its
// plain probe is then right, since a shift copies a member forward before
// the slot it left is overwritten or emptied.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "memtrail/detail/probe_gap.hpp"

namespace memtrail::detail {

template <std::size_t kSlots>
class AddressSet {
  static_assert((kSlots & (kSlots - 1)) == 0, "a power of two");

 public:
  // One relaxed load: the hooks' fast path while the set is empty.
  bool empty() const { return count_.load(std::memory_order_relaxed) == 0; }
  std::uint32_t size() const { return count_.load(std::memory_order_relaxed); }

  bool insert(std::uintptr_t p) {
    Guard guard(*this);
    if (count_.load(std::memory_order_relaxed) + 1 >= kSlots) return probe(p) != kNone;
    std::size_t i = slot_of(p);
    for (;; i = (i + 1) & kMask) {
      std::uintptr_t cur = slots_[i].load(std::memory_order_relaxed);
      if (cur == p) return true;
      if (cur == kEmpty) break;
    }
    slots_[i].store(p, std::memory_order_relaxed);
    count_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }

  // Removes `p`; true when it was there.
  bool take(std::uintptr_t p) {
    if (!contains(p)) return false;  // the common case: no lock
    Guard guard(*this);
    std::size_t i = probe(p);
    if (i == kNone) return false;
    close_gap(i);
    count_.fetch_sub(1, std::memory_order_relaxed);
    return true;
  }

  bool contains(std::uintptr_t p) const {
    for (int tries = 0; tries < kStableTries; ++tries) {
      std::uint32_t before = version_.load(std::memory_order_acquire);
      if (before & 1) continue;
      bool found = probe(p) != kNone;
      std::atomic_thread_fence(std::memory_order_acquire);
      if (version_.load(std::memory_order_relaxed) == before) return found;
    }
    return probe(p) != kNone;  // the writer is stopped (see above)
  }

 private:
  static constexpr std::uintptr_t kEmpty = 0;
  static constexpr std::size_t kMask = kSlots - 1;
  static constexpr std::size_t kNone = ~std::size_t{0};
  static constexpr int kShift = 64 - __builtin_ctzll(kSlots);
  static constexpr int kStableTries = 256;

  // The lock, and the version odd while held.
  struct Guard {
    explicit Guard(AddressSet& s) : set(s) {
      while (set.lock_.test_and_set(std::memory_order_acquire)) {
      }
      set.version_.fetch_add(1, std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_release);
    }
    ~Guard() {
      set.version_.fetch_add(1, std::memory_order_release);
      set.lock_.clear(std::memory_order_release);
    }
    AddressSet& set;
  };

  static std::size_t slot_of(std::uintptr_t p) {
    return (p >> 4) * 0x9e3779b97f4a7c15ull >> kShift;
  }

  std::size_t probe(std::uintptr_t p) const {
    std::size_t i = slot_of(p);
    for (std::size_t n = 0; n < kSlots; ++n, i = (i + 1) & kMask) {
      std::uintptr_t cur = slots_[i].load(std::memory_order_relaxed);
      if (cur == p) return i;
      if (cur == kEmpty) return kNone;
    }
    return kNone;
  }

  // Backward shift (probe_gap.hpp): a member is copied to the hole before
  // the slot it left is overwritten or emptied.
  void close_gap(std::size_t hole) {
    std::size_t last = close_probe_gap(
        hole, kMask,
        [&](std::size_t j) { return slots_[j].load(std::memory_order_relaxed) == kEmpty; },
        [&](std::size_t j) { return slot_of(slots_[j].load(std::memory_order_relaxed)); },
        [&](std::size_t from, std::size_t to) {
          slots_[to].store(slots_[from].load(std::memory_order_relaxed), std::memory_order_relaxed);
        });
    slots_[last].store(kEmpty, std::memory_order_relaxed);
  }

  std::atomic<std::uintptr_t> slots_[kSlots] = {};
  std::atomic<std::uint32_t> count_{0};
  std::atomic<std::uint32_t> version_{0};
  std::atomic_flag lock_ = ATOMIC_FLAG_INIT;
};

}  // namespace memtrail::detail
