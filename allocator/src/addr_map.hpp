// Address -> value map for the blocks a pool has handed out: open addressing
// with linear probing in one power-of-two array (no node per entry, one or
// two cache lines per lookup), deletion by backward shift (no tombstones).
// Key 0 marks an empty slot: a pool never hands out address 0.
//
// The entry inserted last waits in a one-entry front slot and enters the
// table only when the next one comes: a block freed before the next
// allocation (the commonest pattern: a temporary, a cached malloc/free pair)
// costs a compare and two stores instead of a hash, a probe and a backward
// shift.
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

  std::size_t size() const { return size_ + (front_.key != 0 ? 1 : 0); }

  // The value's slot, or nullptr.
  [[gnu::always_inline]] V* find(std::uint64_t key) {
    if (front_.key == key && key != 0) [[likely]]
      return &front_.value;
    return find_in_table(key);
  }

  // The key must not be present.
  [[gnu::always_inline]] void insert(std::uint64_t key, V value) {
    if (front_.key != 0) table_insert(front_.key, front_.value);
    front_ = {key, value};
  }

  // Removes the entry whose value slot find() returned.
  [[gnu::always_inline]] void erase(V* value) {
    if (value == &front_.value) [[likely]] {
      front_.key = 0;
      return;
    }
    table_erase(value);
  }

  template <typename F>
  void for_each(F&& f) const {
    if (front_.key != 0) f(front_.key, front_.value);
    for (std::size_t i = 0; i < capacity(); ++i)
      if (slots_[i].key != 0) f(slots_[i].key, slots_[i].value);
  }

 private:
  [[gnu::noinline]] V* find_in_table(std::uint64_t key) {
    if (key == 0) return nullptr;  // the empty front slot's key
    for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == 0) return nullptr;
    }
  }

  void table_insert(std::uint64_t key, V value) {
    if (2 * (size_ + 1) > capacity()) rehash(2 * capacity());
    std::size_t i = slot(key);
    while (slots_[i].key != 0) i = (i + 1) & mask_;
    slots_[i] = {key, value};
    ++size_;
  }

  [[gnu::noinline]] void table_erase(V* value) {
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
      if (old[i].key != 0) table_insert(old[i].key, old[i].value);
  }

  Slot front_;  // inserted last; key 0 when empty
  std::unique_ptr<Slot[]> slots_;
  std::size_t mask_ = 0, size_ = 0;
  unsigned shift_ = 60;
};

}  // namespace memtrail::alloc::detail
