// Open-addressing hash map for the writer's per-event lookups (live heap
// blocks, the encoder's address prediction). std::unordered_map allocates and
// frees a node per insert/erase; on churn-heavy traces that malloc traffic
// and the pointer chasing cost the writer ~20 % of its time. Keys and values
// live inline; linear probing with backward-shift deletion (no tombstones),
// so probe sequences stay short under constant insert/erase churn.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "probe_gap.hpp"
namespace memtrail::runtime {

// Key needs ==; Hash returns a well-mixed 64-bit value.
template <class Key, class Value, class Hash>
class FlatMap {
 public:
  FlatMap() { rehash(64); }

  std::size_t size() const { return size_; }

  Value* find(const Key& key) {
    for (std::size_t i = slot_of(key);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (!s.used) return nullptr;
      if (s.key == key) return &s.value;
    }
  }

  // Returns the value for `key` and whether it was inserted (value-initialised).
  std::pair<Value*, bool> try_emplace(const Key& key) {
    if ((size_ + 1) * 4 > slots_.size() * 3) rehash(slots_.size() * 2);
    for (std::size_t i = slot_of(key);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (!s.used) {
        s.used = true;
        s.key = key;
        s.value = Value{};
        ++size_;
        return {&s.value, true};
      }
      if (s.key == key) return {&s.value, false};
    }
  }

  bool erase(const Key& key) {
    std::size_t i = slot_of(key);
    for (;; i = (i + 1) & mask_) {
      if (!slots_[i].used) return false;
      if (slots_[i].key == key) break;
    }
    i = close_probe_gap(
        i, mask_, [&](std::size_t j) { return !slots_[j].used; },
        [&](std::size_t j) { return slot_of(slots_[j].key); },
        [&](std::size_t from, std::size_t to) { slots_[to] = slots_[from]; });
    slots_[i].used = false;
    --size_;
    return true;
  }

  void clear() {
    if (size_ == 0) return;
    for (Slot& s : slots_) s.used = false;
    size_ = 0;
  }

  template <class Fn>
  void for_each(Fn&& fn) const {
    for (const Slot& s : slots_)
      if (s.used) fn(s.key, s.value);
  }

 private:
  struct Slot {
    Key key{};
    Value value{};
    bool used = false;
  };

  std::size_t slot_of(const Key& key) const { return (Hash{}(key) >> shift_) & mask_; }

  void rehash(std::size_t capacity) {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.resize(capacity);
    mask_ = capacity - 1;
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(capacity));
    size_ = 0;
    for (const Slot& s : old)
      if (s.used) *try_emplace(s.key).first = s.value;
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  unsigned shift_ = 0;
  std::size_t size_ = 0;
};

// Fibonacci hashing: the map uses the top bits.
struct AddressHash {
  std::uint64_t operator()(std::uint64_t address) const { return address * 0x9e3779b97f4a7c15ull; }
};

}  // namespace memtrail::runtime
