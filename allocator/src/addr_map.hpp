// Address -> value map for the blocks a pool has handed out: open addressing
// with linear probing in one power-of-two array (no node per entry, one or
// two cache lines per lookup), deletion by backward shift (no tombstones).
// Key 0 marks an empty slot: a pool never hands out address 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

namespace memtrail::alloc::detail {

template <typename V>
class AddrMap {
 public:
  AddrMap() { rehash(16); }

  std::size_t size() const { return size_; }

  // The value's slot, or nullptr.
  V* find(std::uint64_t key) {
    for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == 0) return nullptr;
    }
  }

  // The key must not be present.
  void insert(std::uint64_t key, V value) {
    if (2 * (size_ + 1) > capacity()) rehash(2 * capacity());
    std::size_t i = slot(key);
    while (slots_[i].key != 0) i = (i + 1) & mask_;
    slots_[i] = {key, value};
    ++size_;
  }

  // Removes the entry whose value slot find() returned.
  void erase(V* value) {
    auto* hole = reinterpret_cast<Slot*>(reinterpret_cast<char*>(value) - offsetof(Slot, value));
    std::size_t i = static_cast<std::size_t>(hole - slots_.get());
    // Backward shift: move later entries of the probe run into the hole
    // when their home slot does not lie between the hole and them.
    for (std::size_t j = (i + 1) & mask_; slots_[j].key != 0; j = (j + 1) & mask_) {
      const std::size_t home = slot(slots_[j].key);
      if (((j - home) & mask_) >= ((j - i) & mask_)) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i].key = 0;
    --size_;
  }

  template <typename F>
  void for_each(F&& f) const {
    for (std::size_t i = 0; i < capacity(); ++i)
      if (slots_[i].key != 0) f(slots_[i].key, slots_[i].value);
  }

 private:
  struct Slot {
    std::uint64_t key = 0;
    V value{};
  };
  std::size_t capacity() const { return mask_ + 1; }
  std::size_t slot(std::uint64_t key) const {
    // Block addresses are 256- or 512-byte aligned: multiply to spread the
    // high bits, take the top ones.
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void rehash(std::size_t capacity) {
    std::unique_ptr<Slot[]> old = std::move(slots_);
    const std::size_t old_capacity = old ? mask_ + 1 : 0;
    slots_ = std::make_unique<Slot[]>(capacity);
    mask_ = capacity - 1;
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(capacity));
    size_ = 0;
    for (std::size_t i = 0; i < old_capacity; ++i)
      if (old[i].key != 0) insert(old[i].key, old[i].value);
  }

  std::unique_ptr<Slot[]> slots_;
  std::size_t mask_ = 0, size_ = 0;
  unsigned shift_ = 60;
};

}  // namespace memtrail::alloc::detail
