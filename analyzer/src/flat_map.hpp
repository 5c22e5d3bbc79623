// Open-addressing hash map from a 64-bit address to a small value, for the
// live-block sets of the analysis pass. std::unordered_map allocates a node
// per block and costs ~3x more per insert/erase on a 10^8-event trace; this
// keeps keys and values inline (linear probing, backward-shift deletion, no
// tombstones, so lookups stay short after heavy churn).
//
// Kept apart from the project's AddressTable (address_table.hpp) for a
// measured reason: the report's pass is bound by this lookup (half of the
// analysis thread on fifo-new-delete and cross-thread-64 is its cache miss,
// docs/BENCHMARKS.md), and AddressTable's index-then-entry layout adds a
// second miss per hit (bench_address_table, 10^7 keys: find 237 ns against
// 91 ns inline). The analyzer trades memory for that miss; the tracer,
// inside the program, does not.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace memtrail::detail {

template <class Value>
class AddressMap {
 public:
  AddressMap() { rehash(16); }

  std::size_t size() const { return size_; }

  // Returns the value for `key`, or nullptr.
  Value* find(std::uint64_t key) {
    if (key == kEmpty) return has_empty_key_ ? &empty_key_value_ : nullptr;
    for (std::size_t i = slot_of(key);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.key == key) return &s.value;
      if (s.key == kEmpty) return nullptr;
    }
  }

  // Starts loading the slot `key` hashes to, ahead of its find/take/insert.
  void prefetch(std::uint64_t key) const { __builtin_prefetch(&slots_[slot_of(key)]); }

  // Finds `key` or inserts it with a default value; returns the value and
  // whether it was inserted (one probe, for allocations).
  std::pair<Value*, bool> try_emplace(std::uint64_t key) {
    if (key == kEmpty) {
      bool fresh = !has_empty_key_;
      if (fresh) {
        ++size_;
        empty_key_value_ = Value{};
      }
      has_empty_key_ = true;
      return {&empty_key_value_, fresh};
    }
    if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);  // load <= 1/2: short runs
    for (std::size_t i = slot_of(key);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.key == key) return {&s.value, false};
      if (s.key == kEmpty) {
        s.key = key;
        s.value = Value{};
        ++size_;
        return {&s.value, true};
      }
    }
  }

  // Inserts or overwrites; returns the stored value and whether it was new.
  std::pair<Value*, bool> insert(std::uint64_t key, const Value& value) {
    if (key == kEmpty) {
      bool fresh = !has_empty_key_;
      if (fresh) ++size_;
      has_empty_key_ = true;
      empty_key_value_ = value;
      return {&empty_key_value_, fresh};
    }
    if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);  // load <= 1/2: short runs
    for (std::size_t i = slot_of(key);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.key == key) {
        s.value = value;
        return {&s.value, false};
      }
      if (s.key == kEmpty) {
        s.key = key;
        s.value = value;
        ++size_;
        return {&s.value, true};
      }
    }
  }

  // Removes `key`; returns false if it was absent.
  bool erase(std::uint64_t key) {
    Value ignored;
    return take(key, ignored);
  }

  // Removes `key` and moves its value to `out` (one probe, for frees).
  bool take(std::uint64_t key, Value& out) {
    if (key == kEmpty) {
      if (!has_empty_key_) return false;
      has_empty_key_ = false;
      out = empty_key_value_;
      --size_;
      return true;
    }
    std::size_t i = slot_of(key);
    for (;; i = (i + 1) & mask_) {
      if (slots_[i].key == key) break;
      if (slots_[i].key == kEmpty) return false;
    }
    out = slots_[i].value;
    // Backward-shift: pull later members of the probe run into the hole.
    std::size_t hole = i;
    for (std::size_t j = (i + 1) & mask_; slots_[j].key != kEmpty; j = (j + 1) & mask_) {
      std::size_t home = slot_of(slots_[j].key);
      bool movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
      if (movable) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].key = kEmpty;
    --size_;
    return true;
  }

  template <class Fn>
  void for_each(Fn&& fn) {
    if (has_empty_key_) fn(kEmpty, empty_key_value_);
    for (Slot& s : slots_)
      if (s.key != kEmpty) fn(s.key, s.value);
  }
  // For readers of the live set (the block trackers): values read only.
  template <class Fn>
  void for_each(Fn&& fn) const {
    if (has_empty_key_) fn(kEmpty, empty_key_value_);
    for (const Slot& s : slots_)
      if (s.key != kEmpty) fn(s.key, s.value);
  }

 private:
  // Address 0 is never a live block in practice; it still works (side slot).
  static constexpr std::uint64_t kEmpty = 0;
  struct Slot {
    std::uint64_t key = kEmpty;
    Value value{};
  };

  std::size_t slot_of(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
  }

  void rehash(std::size_t capacity) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(capacity));
    for (Slot& s : old) {
      if (s.key == kEmpty) continue;
      std::size_t i = slot_of(s.key);
      while (slots_[i].key != kEmpty) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  unsigned shift_ = 60;
  std::size_t size_ = 0;
  bool has_empty_key_ = false;
  Value empty_key_value_{};
};

}  // namespace memtrail::detail
