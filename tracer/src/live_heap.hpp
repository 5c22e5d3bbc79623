// The writer's map of live heap blocks (address -> LiveEntry), read by the
// exit-time reachability scan. Every heap event touches it, so it is made
// for the writer's two questions: an alloc enters a block (and learns
// whether one was there: its free was lost), a free finds and removes its
// block in one probe sequence. Each entry also holds the block's place in
// the TraceWriter's chunks, so the encoder needs no table of its own for
// heap blocks (TraceWriter::add_tracked_event). Open addressing with linear
// probing and backward-shift deletion, 40-byte slots; address 0 (never a
// real block, but recorded if a caller reports one) lives outside the
// table, so 0 can mark an empty slot.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "memtrail/trace_file.hpp"
#include "probe_gap.hpp"
namespace memtrail::runtime {

struct LiveEntry {
  std::uint64_t size;
  std::uint64_t time_ns;
  std::uint32_t stack, thread;
  TraceWriter::BlockRef chunk_ref;  // set by the encoder
};

class LiveHeap {
 public:
  LiveHeap() { resize(1024); }

  std::size_t size() const { return count_ + (has_zero_ ? 1 : 0); }

  // Enters `entry` at `address` and returns where it is stored (valid until
  // the next put or take); `had` says whether a block was already there
  // (then `replaced` holds it).
  LiveEntry* put(std::uint64_t address, const LiveEntry& entry, bool& had, LiveEntry& replaced) {
    if (address == 0) {
      had = has_zero_;
      replaced = zero_;
      zero_ = entry;
      has_zero_ = true;
      return &zero_;
    }
    if (crowded()) resize(slots_.size() * 2);
    std::size_t i = home(address);
    while (slots_[i].address != 0 && slots_[i].address != address) i = (i + 1) & mask_;
    had = slots_[i].address == address;
    if (had)
      replaced = slots_[i].entry;
    else
      ++count_;
    slots_[i] = Slot{address, entry};
    return &slots_[i].entry;
  }

  // Removes the block at `address` into `out`; false when there is none.
  bool take(std::uint64_t address, LiveEntry& out) {
    if (address == 0) {
      if (!has_zero_) return false;
      out = zero_;
      has_zero_ = false;
      return true;
    }
    std::size_t i = home(address);
    for (;; i = (i + 1) & mask_) {
      if (slots_[i].address == 0) return false;
      if (slots_[i].address == address) break;
    }
    out = slots_[i].entry;
    i = close_probe_gap(
        i, mask_, [&](std::size_t j) { return slots_[j].address == 0; },
        [&](std::size_t j) { return home(slots_[j].address); },
        [&](std::size_t from, std::size_t to) { slots_[to] = slots_[from]; });
    slots_[i].address = 0;
    --count_;
    return true;
  }

  template <class Fn>
  void for_each(Fn&& fn) const {
    if (has_zero_) fn(std::uint64_t{0}, zero_);
    for (const Slot& s : slots_)
      if (s.address != 0) fn(s.address, s.entry);
  }

 private:
  struct Slot {
    std::uint64_t address;
    LiveEntry entry;
  };
  static_assert(sizeof(Slot) == 40);

  // At most a quarter full while the table is small: short probe runs make
  // an operation ~5 ns instead of ~9 at half full (a replay of the churn
  // benchmark's 4M heap events); half full from kSparseSlots on, so a
  // program with millions of live blocks pays twice their size, not four
  // times.
  static constexpr std::size_t kSparseSlots = std::size_t{1} << 16;
  bool crowded() const {
    std::size_t n = slots_.size();
    return (count_ + 1) * (n <= kSparseSlots ? 4 : 2) > n;
  }
  std::size_t home(std::uint64_t address) const {
    return static_cast<std::size_t>((address * 0x9e3779b97f4a7c15ull) >> shift_);
  }
  void resize(std::size_t capacity) {
    std::vector<Slot> old(capacity, Slot{});
    old.swap(slots_);
    mask_ = capacity - 1;
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(capacity));
    count_ = 0;
    LiveEntry ignored;
    bool had;
    for (const Slot& s : old)
      if (s.address != 0) put(s.address, s.entry, had, ignored);
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  unsigned shift_ = 0;
  std::size_t count_ = 0;
  bool has_zero_ = false;
  LiveEntry zero_{};
};

}  // namespace memtrail::runtime
