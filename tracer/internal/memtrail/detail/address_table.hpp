// The project's one table keyed by a block address (or any key a hash
// spreads): the writer's live heap and chunk blocks, the analyzer's live
// sets and call-tree index, the allocator pools' block maps.
//
// Entries (key, value) lie densely, in a mapping of their own grown by
// mremap: a program with n live blocks pays n entries of resident memory,
// not a half-empty table's twice that, and growing moves page tables, never
// copies the entries nor holds two generations at once (the guest-parity
// shape of 300,000 live blocks took 40 MiB as 40-byte slots half full; now
// 12 MiB of entries and 4 MiB of index). An index of 8-byte slots finds
// them: the hash's top 32 bits (the tag, which also gives the home slot, so
// growing the index reads no entry) and the entry's position + 1 (0: empty).
// Linear probing up to 3/4 full (eight slots a cache line: a probe rarely
// leaves its line, and a tag mismatch costs no entry read); deletion by
// backward shift, no tombstones. A removed entry's place goes on a free
// list that the next insertion takes (moving the last entry into it cost
// a second probe and a third cache line per removal: 2.4x the old table's
// churn time at 10^5 keys). Memory comes from mmap by system call, never
// from the program's allocator (issue 26: the tracer is a guest).
//
// A pointer to a value stays valid until the next insertion (which may
// move the entries) or the value's own removal. Iteration follows the
// index (hash order).
#pragma once

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#include "memtrail/detail/own_mappings.hpp"
#include "memtrail/detail/probe_gap.hpp"

namespace memtrail::detail {

// Fibonacci hashing: the top bits are the well-mixed ones.
inline std::uint64_t address_hash(std::uint64_t address) {
  return address * 0x9e3779b97f4a7c15ull;
}

namespace table_memory {

inline void* map(std::size_t bytes) {
  long m = ::syscall(SYS_mmap, nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
  if (m < 0 && m > -4096) throw std::bad_alloc();
  note_own_mapped(reinterpret_cast<void*>(m), bytes, OwnPurpose::address_tables);
  return reinterpret_cast<void*>(m);
}
inline void unmap(void* p, std::size_t bytes) {
  if (!p) return;
  note_own_unmapped(p, bytes);
  ::syscall(SYS_munmap, p, bytes);
}
// Grows a mapping (the kernel moves its pages; nothing is copied).
inline void* remap(void* p, std::size_t old_bytes, std::size_t new_bytes) {
  if (!p) return map(new_bytes);
  long m = ::syscall(SYS_mremap, p, old_bytes, new_bytes, MREMAP_MAYMOVE);
  if (m < 0 && m > -4096) throw std::bad_alloc();
  note_own_unmapped(p, old_bytes);
  note_own_mapped(reinterpret_cast<void*>(m), new_bytes, OwnPurpose::address_tables);
  return reinterpret_cast<void*>(m);
}
inline std::size_t page_round(std::size_t bytes) {
  constexpr std::size_t kPage = 4096;
  return (bytes + kPage - 1) & ~(kPage - 1);
}

}  // namespace table_memory

// Key: an integer (hashed by address_hash) or a type with == and an
// address_hash(const Key&) overload found by lookup. Key and Value are
// trivially copyable (entries move by memcpy and mremap).
template <class Value, class Key = std::uint64_t>
class AddressTable {
  static_assert(std::is_trivially_copyable_v<Key> && std::is_trivially_copyable_v<Value>);
  static_assert(sizeof(Key) >= sizeof(std::uint32_t), "a free entry holds the next one's number");

 public:
  struct Entry {
    Key key;
    Value value;
  };

  AddressTable() = default;
  ~AddressTable() { release(); }
  AddressTable(const AddressTable& other) { copy_from(other); }
  AddressTable& operator=(const AddressTable& other) {
    if (this != &other) {
      release();
      copy_from(other);
    }
    return *this;
  }
  AddressTable(AddressTable&& other) noexcept { steal(other); }
  AddressTable& operator=(AddressTable&& other) noexcept {
    if (this != &other) {
      release();
      steal(other);
    }
    return *this;
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Mapped bytes (entries and index): what a micro-benchmark reports.
  std::size_t mapped_bytes() const { return entry_bytes_ + index_slots_ * sizeof(std::uint64_t); }

  Value* find(const Key& key) {
    std::size_t slot = find_slot(key, hash_of(key));
    return slot == kNone ? nullptr : &entries_[position(index_[slot])].value;
  }
  const Value* find(const Key& key) const { return const_cast<AddressTable*>(this)->find(key); }

  // The value for `key` and whether it was inserted (value-initialised).
  std::pair<Value*, bool> try_emplace(const Key& key) {
    std::uint64_t h = hash_of(key);
    std::size_t slot = find_slot(key, h);
    if (slot != kNone) return {&entries_[position(index_[slot])].value, false};
    return {append(key, h), true};
  }

  // Inserts or overwrites; returns the stored value and whether it was new.
  std::pair<Value*, bool> insert_or_assign(const Key& key, const Value& value) {
    auto [v, fresh] = try_emplace(key);
    *v = value;
    return {v, fresh};
  }

  // Removes `key`, its value moved to `out`; false when absent.
  bool take(const Key& key, Value& out) {
    std::size_t slot = find_slot(key, hash_of(key));
    if (slot == kNone) return false;
    out = entries_[position(index_[slot])].value;
    remove_slot(slot);
    return true;
  }
  bool erase(const Key& key) {
    std::size_t slot = find_slot(key, hash_of(key));
    if (slot == kNone) return false;
    remove_slot(slot);
    return true;
  }
  // Removes the entry whose value find() or try_emplace() returned.
  void erase_value(Value* value) {
    auto* entry = reinterpret_cast<Entry*>(reinterpret_cast<char*>(value) - offsetof(Entry, value));
    remove_slot(slot_of_position(static_cast<std::uint32_t>(entry - entries_), entry->key));
  }

  // Keeps the mappings (their pages are reused by the next entries).
  void clear() {
    if (size_ == 0) return;
    std::memset(index_, 0, index_slots_ * sizeof(std::uint64_t));
    size_ = used_ = 0;
    free_head_ = 0;
  }

  template <class Fn>
  void for_each(Fn&& fn) {
    for (std::size_t i = 0; i < index_slots_; ++i)
      if (index_[i] != 0) {
        Entry& e = entries_[position(index_[i])];
        fn(e.key, e.value);
      }
  }
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (std::size_t i = 0; i < index_slots_; ++i)
      if (index_[i] != 0) {
        const Entry& e = entries_[position(index_[i])];
        fn(e.key, e.value);
      }
  }

 private:
  static constexpr std::size_t kNone = ~std::size_t{0};
  static constexpr std::size_t kFirstIndexSlots = 512;  // one page

  static std::uint64_t hash_of(const Key& key) { return address_hash(key); }
  static std::uint32_t tag_of(std::uint64_t hash) { return static_cast<std::uint32_t>(hash >> 32); }
  static std::uint32_t position(std::uint64_t slot) { return static_cast<std::uint32_t>(slot) - 1; }
  std::size_t home(std::uint32_t tag) const { return tag >> tag_shift_; }

  std::size_t find_slot(const Key& key, std::uint64_t hash) const {
    if (index_slots_ == 0) return kNone;
    std::uint32_t tag = tag_of(hash);
    for (std::size_t i = home(tag);; i = (i + 1) & mask_) {
      std::uint64_t s = index_[i];
      if (s == 0) return kNone;
      if (static_cast<std::uint32_t>(s >> 32) == tag && entries_[position(s)].key == key) return i;
    }
  }
  std::size_t slot_of_position(std::uint32_t pos, const Key& key) const {
    for (std::size_t i = home(tag_of(hash_of(key)));; i = (i + 1) & mask_)
      if (position(index_[i]) == pos) return i;
  }

  Value* append(const Key& key, std::uint64_t hash) {
    if ((size_ + 1) * 4 > index_slots_ * 3) grow_index();
    std::uint32_t pos;
    if (free_head_ != 0) {
      pos = free_head_ - 1;
      std::memcpy(&free_head_, &entries_[pos], sizeof free_head_);
    } else {
      if ((used_ + 1) * sizeof(Entry) > entry_bytes_) grow_entries();
      pos = static_cast<std::uint32_t>(used_++);
    }
    std::uint32_t tag = tag_of(hash);
    std::size_t i = home(tag);
    while (index_[i] != 0) i = (i + 1) & mask_;
    index_[i] = std::uint64_t{tag} << 32 | (std::uint64_t{pos} + 1);
    ++size_;
    Entry* e = &entries_[pos];
    e->key = key;
    e->value = Value{};
    return &e->value;
  }

  void remove_slot(std::size_t slot) {
    std::uint32_t pos = position(index_[slot]);
    close_gap(slot);
    --size_;
    std::memcpy(static_cast<void*>(&entries_[pos]), &free_head_, sizeof free_head_);
    free_head_ = pos + 1;
  }

  void close_gap(std::size_t hole) {
    std::size_t last = close_probe_gap(
        hole, mask_, [&](std::size_t j) { return index_[j] == 0; },
        [&](std::size_t j) { return home(static_cast<std::uint32_t>(index_[j] >> 32)); },
        [&](std::size_t from, std::size_t to) { index_[to] = index_[from]; });
    index_[last] = 0;
  }

  // The index is an eighth of the entries' size or less: a new one is built
  // from the old one's tags (no entry is read) and the old one let go.
  void grow_index() {
    std::size_t slots = index_slots_ ? index_slots_ * 2 : kFirstIndexSlots;
    auto* fresh = static_cast<std::uint64_t*>(table_memory::map(slots * sizeof(std::uint64_t)));
    std::uint64_t* old = index_;
    std::size_t old_slots = index_slots_;
    index_ = fresh;
    index_slots_ = slots;
    mask_ = slots - 1;
    tag_shift_ = 32 - static_cast<unsigned>(__builtin_ctzll(slots));
    for (std::size_t k = 0; k < old_slots; ++k) {
      if (old[k] == 0) continue;
      std::size_t i = home(static_cast<std::uint32_t>(old[k] >> 32));
      while (index_[i] != 0) i = (i + 1) & mask_;
      index_[i] = old[k];
    }
    table_memory::unmap(old, old_slots * sizeof(std::uint64_t));
  }

  void grow_entries() {
    std::size_t bytes =
        entry_bytes_ ? entry_bytes_ * 2 : table_memory::page_round(sizeof(Entry) * 32);
    entries_ = static_cast<Entry*>(table_memory::remap(entries_, entry_bytes_, bytes));
    entry_bytes_ = bytes;
  }

  void release() {
    table_memory::unmap(entries_, entry_bytes_);
    table_memory::unmap(index_, index_slots_ * sizeof(std::uint64_t));
    entries_ = nullptr;
    index_ = nullptr;
    entry_bytes_ = index_slots_ = size_ = used_ = mask_ = 0;
    free_head_ = 0;
  }
  void steal(AddressTable& other) {
    entries_ = std::exchange(other.entries_, nullptr);
    index_ = std::exchange(other.index_, nullptr);
    entry_bytes_ = std::exchange(other.entry_bytes_, 0);
    index_slots_ = std::exchange(other.index_slots_, 0);
    size_ = std::exchange(other.size_, 0);
    used_ = std::exchange(other.used_, 0);
    free_head_ = std::exchange(other.free_head_, 0);
    mask_ = std::exchange(other.mask_, 0);
    tag_shift_ = other.tag_shift_;
  }
  void copy_from(const AddressTable& other) {
    if (other.index_slots_ == 0) return;
    entries_ = static_cast<Entry*>(table_memory::map(other.entry_bytes_));
    index_ =
        static_cast<std::uint64_t*>(table_memory::map(other.index_slots_ * sizeof(std::uint64_t)));
    std::memcpy(static_cast<void*>(entries_), other.entries_, other.used_ * sizeof(Entry));
    std::memcpy(index_, other.index_, other.index_slots_ * sizeof(std::uint64_t));
    entry_bytes_ = other.entry_bytes_;
    index_slots_ = other.index_slots_;
    size_ = other.size_;
    used_ = other.used_;
    free_head_ = other.free_head_;
    mask_ = other.mask_;
    tag_shift_ = other.tag_shift_;
  }

  Entry* entries_ = nullptr;
  std::uint64_t* index_ = nullptr;
  std::size_t entry_bytes_ = 0;
  std::size_t index_slots_ = 0;
  std::size_t size_ = 0;         // live entries
  std::size_t used_ = 0;         // entries ever placed (live and free)
  std::uint32_t free_head_ = 0;  // a free entry's position + 1, 0: none
  std::size_t mask_ = 0;
  unsigned tag_shift_ = 0;
};

}  // namespace memtrail::detail
