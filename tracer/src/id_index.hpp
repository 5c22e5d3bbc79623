// An open-addressing index of 32-bit ids whose keys live in the caller's own
// arrays (the stack trie's nodes, its ip dictionary): 4 bytes a slot, so a
// table of a million ids costs 5-7 MB where a std::unordered_map costs ~50.
//
// Each slot holds id | tag << kIdBits, 0 = empty; the tag is 5 bits of the
// key's hash, so a probe dereferences the caller's key (a likely cache miss)
// only for 1 in 32 foreign ids. Linear probing from fastrange(hash) (any
// capacity, not only powers of two); at 4/5 full the table grows by half
// and re-places every id with the caller's hash_of(id), walking ids in
// order so the keys are read sequentially (the stack trie computes each
// hash from its parent's, an earlier id). No deletion: the trie only grows.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "table_memory.hpp"

namespace memtrail::runtime {

class IdIndex {
 public:
  static constexpr int kIdBits = 27;
  static constexpr std::uint32_t kMaxId = (1u << kIdBits) - 1;  // ids are 1..kMaxId

  // The id whose key `matches(id)`, among those stored with `hash`; 0 if none.
  template <class Matches>
  std::uint32_t find(std::uint64_t hash, Matches&& matches) const {
    if (cap_ == 0) return 0;
    const std::uint32_t want = tag(hash);
    for (std::size_t i = home(hash);; i = next(i)) {
      std::uint32_t s = slots_[i];
      if (s == 0) return 0;
      if ((s & ~kMaxId) == want && matches(s & kMaxId)) return s & kMaxId;
    }
  }

  // The first id stored with `hash`'s tag in its probe run, 0 if none: a
  // candidate read without touching the caller's keys, so that many lookups
  // can be in flight at once (the stack trie's batched walk); the caller
  // checks it and falls back to find() when it is a foreign id.
  std::uint32_t first_candidate(std::uint64_t hash) const {
    return find(hash, [](std::uint32_t) { return true; });
  }
  // Starts loading the cache line `hash`'s probe run begins in.
  void prefetch(std::uint64_t hash) const {
    if (cap_ != 0) __builtin_prefetch(&slots_[home(hash)]);
  }

  // Whether the next insert re-places every id (calls its hash_of).
  bool full() const { return (size_ + 1) * 5 > cap_ * 4; }

  // Adds `id` (1..kMaxId, not present) under `hash`. hash_of(k) gives the
  // hash of id k, for every id stored so far (growth re-places them all,
  // asking for ids 1..size() in that order); ids must be dense: 1..size().
  template <class HashOf>
  void insert(std::uint64_t hash, std::uint32_t id, HashOf&& hash_of) {
    if (full()) grow(hash_of);
    place(hash, id);
    ++size_;
  }

  std::size_t size() const { return size_; }
  std::size_t capacity() const { return cap_; }
  std::size_t memory_bytes() const { return cap_ * sizeof(std::uint32_t); }

 private:
  static std::uint32_t tag(std::uint64_t hash) {
    return static_cast<std::uint32_t>(hash) & ~kMaxId;  // bits 27..31
  }
  std::size_t home(std::uint64_t hash) const {
    return static_cast<std::size_t>((static_cast<unsigned __int128>(hash) * cap_) >> 64);
  }
  std::size_t next(std::size_t i) const { return i + 1 == cap_ ? 0 : i + 1; }
  void place(std::uint64_t hash, std::uint32_t id) {
    std::size_t i = home(hash);
    while (slots_[i] != 0) i = next(i);
    slots_[i] = id | tag(hash);
  }
  template <class HashOf>
  void grow(HashOf& hash_of) {
    std::size_t cap = std::max({kMinCapacity, cap_ + cap_ / 2, (size_ + 1) * 5 / 4 + 1});
    slots_.release();  // before the new table: the old one is not needed to re-place
    cap_ = 0;          // (empty, should the allocation throw)
    slots_ = TableMemory<std::uint32_t>(cap);
    cap_ = cap;
    // Each placement reads a random slot, a cache miss in a big table: the
    // home of the id kAhead places on is requested first, so they overlap.
    std::uint64_t pending[kAhead];
    for (std::size_t k = 1; k <= size_; ++k) {
      const std::uint64_t h = hash_of(static_cast<std::uint32_t>(k));
      __builtin_prefetch(&slots_[home(h)], 1);
      std::uint64_t& ring = pending[k % kAhead];
      if (k > kAhead) place(ring, static_cast<std::uint32_t>(k - kAhead));
      ring = h;
    }
    for (std::size_t k = size_ > kAhead ? size_ - kAhead + 1 : 1; k <= size_; ++k)
      place(pending[k % kAhead], static_cast<std::uint32_t>(k));
  }

  static constexpr std::size_t kAhead = 16;

  static constexpr std::size_t kMinCapacity = 1024;
  TableMemory<std::uint32_t> slots_;  // huge pages past 2 MiB
  std::size_t cap_ = 0, size_ = 0;
};

}  // namespace memtrail::runtime
