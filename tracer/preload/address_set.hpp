// A fixed-size set of block addresses for the allocation hooks: no
// allocation, lock-free lookups, a spinlock for inserts and removals. Open
// addressing with linear probing; 0 marks an empty slot, 1 an erased one.
// When full, inserts are dropped (insert returns false).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace memtrail::preload {

template <std::size_t kSlots>
class AddressSet {
  static_assert((kSlots & (kSlots - 1)) == 0, "a power of two");

 public:
  // One relaxed load: the hooks' fast path while the set is empty.
  bool empty() const { return count_.load(std::memory_order_relaxed) == 0; }

  bool insert(std::uintptr_t p) {
    Guard guard(lock_);
    std::size_t i = slot_of(p);
    for (std::size_t probes = 0; probes < kSlots; ++probes, i = (i + 1) & (kSlots - 1)) {
      std::uintptr_t cur = slots_[i].load(std::memory_order_relaxed);
      if (cur == p) return true;
      if (cur == kEmpty || cur == kErased) {
        slots_[i].store(p, std::memory_order_release);
        count_.fetch_add(1, std::memory_order_relaxed);
        return true;
      }
    }
    return false;
  }

  // Removes `p`; true when it was there.
  bool take(std::uintptr_t p) {
    if (!contains(p)) return false;  // the common case: no lock
    Guard guard(lock_);
    std::size_t i = slot_of(p);
    for (std::size_t probes = 0; probes < kSlots; ++probes, i = (i + 1) & (kSlots - 1)) {
      std::uintptr_t cur = slots_[i].load(std::memory_order_relaxed);
      if (cur == kEmpty) return false;
      if (cur == p) {
        slots_[i].store(kErased, std::memory_order_release);
        count_.fetch_sub(1, std::memory_order_relaxed);
        return true;
      }
    }
    return false;
  }

  bool contains(std::uintptr_t p) const {
    std::size_t i = slot_of(p);
    for (std::size_t probes = 0; probes < kSlots; ++probes, i = (i + 1) & (kSlots - 1)) {
      std::uintptr_t cur = slots_[i].load(std::memory_order_acquire);
      if (cur == kEmpty) return false;
      if (cur == p) return true;
    }
    return false;
  }

 private:
  static constexpr std::uintptr_t kEmpty = 0;
  static constexpr std::uintptr_t kErased = 1;
  static constexpr int kShift = 64 - __builtin_ctzll(kSlots);

  struct Guard {
    explicit Guard(std::atomic_flag& f) : flag(f) {
      while (flag.test_and_set(std::memory_order_acquire)) {
      }
    }
    ~Guard() { flag.clear(std::memory_order_release); }
    std::atomic_flag& flag;
  };

  static std::size_t slot_of(std::uintptr_t p) {
    return (p >> 4) * 0x9e3779b97f4a7c15ull >> kShift;
  }

  std::atomic<std::uintptr_t> slots_[kSlots] = {};
  std::atomic<std::uint32_t> count_{0};
  std::atomic_flag lock_ = ATOMIC_FLAG_INIT;
};

}  // namespace memtrail::preload
