// The codec's prediction model in its plainest form, for checking only: the
// rules of docs/trace-format.md 3.2 as short lists and scans, no indexes.
// The tracer's one model (tracer/src/codec/thread_model.hpp) must take the
// same decisions; tests/format/test_codec_model.cpp runs both side by side.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "format_layout.hpp"
#include "memtrail/detail/address_table.hpp"

namespace memtrail::format::reference {

// The live entries among the last kRecentFrees addresses a thread freed,
// newest first: rank r is the r-th newest free whose block has not been
// allocated again. Allocators hand recently freed blocks out again, so an
// alloc's address is often one of these. A ring with a live bitmap and an
// address index: push, take and rank cost O(1) words, not a shifted list.
struct RecentFrees {
  static_assert((kRecentFrees & (kRecentFrees - 1)) == 0, "ring size is a power of two");
  std::array<std::uint64_t, kRecentFrees> ring{};
  std::array<std::uint64_t, kRecentFrees / 64> live{};
  std::uint64_t pushed = 0;                    // frees pushed in this chunk
  detail::AddressTable<std::uint64_t> newest;  // address -> its newest push

  static unsigned slot(std::uint64_t seq) {
    return static_cast<unsigned>(seq & (kRecentFrees - 1));
  }
  bool is_live(std::uint64_t seq) const {
    unsigned i = slot(seq);
    return seq < pushed && pushed - seq <= kRecentFrees && ((live[i >> 6] >> (i & 63)) & 1);
  }
  // `newest` keeps addresses that left the window (is_live rejects their
  // seq), so a push costs one probe, not a probe plus a backward-shift
  // erase; it is rebuilt from the window once it holds 4x the window.
  void push(std::uint64_t a) {
    unsigned i = slot(pushed);
    ring[i] = a;
    live[i >> 6] |= std::uint64_t{1} << (i & 63);
    *newest.try_emplace(a).first = pushed++;
    if (newest.size() > 4 * static_cast<std::size_t>(kRecentFrees)) rebuild_index();
  }
  void rebuild_index() {
    newest.clear();
    std::uint64_t oldest = pushed > kRecentFrees ? pushed - kRecentFrees : 0;
    for (std::uint64_t s = oldest; s < pushed; ++s) *newest.try_emplace(ring[slot(s)]).first = s;
  }
  // The newest live entry holding `a`.
  bool find(std::uint64_t a, std::uint64_t& seq) {
    std::uint64_t* s = newest.find(a);
    if (!s || !is_live(*s)) return false;
    seq = *s;
    return true;
  }
  void take(std::uint64_t seq) {  // the block is live again
    unsigned i = slot(seq);
    live[i >> 6] &= ~(std::uint64_t{1} << (i & 63));
  }
  // Rank of live entry `seq`: the live entries pushed after it.
  int rank_of(std::uint64_t seq) const {
    int n = 0;
    for (std::uint64_t s = seq + 1; s < pushed;) {
      unsigned i = slot(s), bit = i & 63;
      std::uint64_t span = std::min<std::uint64_t>(64 - bit, pushed - s);
      std::uint64_t w = live[i >> 6] >> bit;
      if (span < 64) w &= (std::uint64_t{1} << span) - 1;
      n += std::popcount(w);
      s += span;
    }
    return n;
  }
  // The live entry of rank `rank`; false when there are not that many.
  // Walks the live bitmap a word at a time, newest first.
  bool seq_at(std::uint64_t rank, std::uint64_t& seq) const {
    std::uint64_t oldest = pushed > kRecentFrees ? pushed - kRecentFrees : 0;
    for (std::uint64_t s = pushed; s > oldest;) {  // entries [s - span, s) share a word
      unsigned top = slot(s - 1);
      std::uint64_t span = std::min<std::uint64_t>((top & 63) + 1, s - oldest);
      std::uint64_t w = live[top >> 6] >> ((top & 63) + 1 - span);
      if (span < 64) w &= (std::uint64_t{1} << span) - 1;
      std::uint64_t c = static_cast<std::uint64_t>(std::popcount(w));
      if (rank < c) {
        for (;; --rank) {
          int bit = 63 - std::countl_zero(w);
          if (rank == 0) return seq = s - span + static_cast<std::uint64_t>(bit), true;
          w &= ~(std::uint64_t{1} << bit);
        }
      }
      rank -= c;
      s -= span;
    }
    return false;
  }
};

// Freed addresses by chunk class, newest first, at most kClassDepth each. A
// direct-mapped table: classes up to 1040 B have their own bucket; larger
// ones share the rest by hash, and a bucket taken over by another class
// starts empty. Lossy on purpose: a forgotten address only costs a delta.
struct ClassFrees {
  struct Bucket {
    std::uint64_t cls = 0;
    int count = 0;
    std::array<std::uint64_t, kClassDepth> address{};
  };
  std::array<Bucket, kClassBuckets> buckets{};

  static int bucket_of(std::uint64_t cls) {
    if (cls <= kSmallClassLimit) return static_cast<int>(cls / 16);
    int first = static_cast<int>(kSmallClassLimit / 16) + 1;
    return first + static_cast<int>(((cls / 16) * 0x9e3779b97f4a7c15ull >> 40) %
                                    static_cast<std::uint64_t>(kClassBuckets - first));
  }
  // The bucket holding `cls`, or nullptr when the class has no entries.
  const Bucket* find(std::uint64_t cls) const {
    const Bucket& b = buckets[bucket_of(cls)];
    return b.cls == cls && b.count > 0 ? &b : nullptr;
  }
  int rank(std::uint64_t cls, std::uint64_t a) const {
    if (const Bucket* b = find(cls))
      for (int i = 0; i < b->count; ++i)
        if (b->address[i] == a) return i;
    return -1;
  }
  void take(std::uint64_t cls, int rank) {
    Bucket& b = buckets[bucket_of(cls)];
    for (int i = rank; i + 1 < b.count; ++i) b.address[i] = b.address[i + 1];
    --b.count;
  }
  void take_address(std::uint64_t cls, std::uint64_t a) {
    int r = rank(cls, a);
    if (r >= 0) take(cls, r);
  }
  void push(std::uint64_t cls, std::uint64_t a) {
    Bucket& b = buckets[bucket_of(cls)];
    if (b.cls != cls) {
      b.cls = cls;
      b.count = 0;
    }
    int n = b.count < kClassDepth ? b.count : kClassDepth - 1;
    for (int i = n; i > 0; --i) b.address[i] = b.address[i - 1];
    b.address[0] = a;
    b.count = n + 1;
  }
};

// Prediction state of one thread within one chunk. Reset at every chunk.
struct ThreadCodecState {
  std::uint64_t last_time = 0;
  std::uint64_t last_address = 0;
  std::uint32_t last_pool = 0;
  std::array<std::uint32_t, kEventKindCount> last_stack{};
  // The stack before last_stack, per kind: call sites often alternate (an
  // immediate free and a deferred one), and MISC value 0 names this one.
  std::array<std::uint32_t, kEventKindCount> prev_stack{};
  std::array<std::uint8_t, kEventKindCount> last_detail{};
  std::array<std::uint64_t, kSizeSlots> slot_size{};
  std::array<std::uint64_t, kSizeSlots> slot_address{};
  int next_slot = 0;
  RecentFrees recent_frees;
  ClassFrees class_frees;
  // Ends (address + chunk_class) of the thread's last kFreshEnds allocs,
  // a ring, newest first: glibc carves a new block from the top chunk, or
  // from the rest of a free chunk it just split, right where one ended.
  std::array<std::uint64_t, kFreshEnds> fresh_ring{};
  std::uint64_t fresh_pushed = 0;
  std::uint64_t fresh_end(int j) const {  // 0 = newest; 0 when none
    return static_cast<std::uint64_t>(j) < fresh_pushed
               ? fresh_ring[(fresh_pushed - 1 - static_cast<std::uint64_t>(j)) & (kFreshEnds - 1)]
               : 0;
  }
  void push_fresh(std::uint64_t end) { fresh_ring[fresh_pushed++ & (kFreshEnds - 1)] = end; }

  // A freed block enters both free lists; its class only when its size is known.
  void push_freed(std::uint64_t address, std::uint64_t size) {
    recent_frees.push(address);
    if (size != 0) class_frees.push(chunk_class(size), address);
  }
  // An alloc/reuse made `address` live again, whichever way it was coded.
  void take_freed(std::uint64_t cls, std::uint64_t address) {
    std::uint64_t seq;
    if (recent_frees.find(address, seq)) recent_frees.take(seq);
    class_frees.take_address(cls, address);
  }

  // MISC value of a given stack: 0 = prev_stack[kind], else id + 1.
  std::uint64_t stack_code(int kind, std::uint32_t stack) const {
    return stack == prev_stack[kind] ? 0 : std::uint64_t{stack} + 1;
  }
  bool stack_of_code(int kind, std::uint64_t code, std::uint32_t& stack) const {
    if (code == 0) return stack = prev_stack[kind], true;
    if (code - 1 > 0xffffffffu) return false;
    return stack = static_cast<std::uint32_t>(code - 1), true;
  }
  void set_stack(int kind, std::uint32_t stack) {
    if (stack != last_stack[kind]) {
      prev_stack[kind] = last_stack[kind];
      last_stack[kind] = stack;
    }
  }

  int find_size(std::uint64_t size) const {
    for (int i = 0; i < kSizeSlots; ++i)
      if (slot_size[i] == size) return i;
    return -1;
  }
  int insert_size(std::uint64_t size) {
    int slot = next_slot;
    next_slot = (next_slot + 1) % kSizeSlots;
    slot_size[slot] = size;
    slot_address[slot] = last_address;
    return slot;
  }
};

// Where an alloc/reuse of chunk class `cls` probably lands, in index order:
// 0..n-1 the class's n freed blocks, newest first (tcache and bins are LIFO
// per class); n+j the end of the thread's j-th newest block (glibc carves
// from the top chunk, or from the rest of a chunk it split, back to back);
// n+kFreshEnds+r rank r of RecentFrees (blocks split from or merged into
// another class's). An index is one byte where a delta costs about three.
struct AllocCandidates {
  ThreadCodecState& st;
  const ClassFrees::Bucket* same_class;
  std::uint64_t n;

  AllocCandidates(ThreadCodecState& s, std::uint64_t cls)
      : st(s),
        same_class(s.class_frees.find(cls)),
        n(same_class ? static_cast<std::uint64_t>(same_class->count) : 0) {}

  bool index_of(std::uint64_t address, std::uint64_t& index) const {
    for (std::uint64_t i = 0; i < n; ++i)
      if (same_class->address[i] == address) return index = i, true;
    int found = -1;  // branch-free, so the compiler can vectorize the scan
    for (int k = 0; k < kFreshEnds; ++k) found = st.fresh_ring[k] == address ? k : found;
    if (found >= 0) {
      index = n + ((st.fresh_pushed - 1 - static_cast<std::uint64_t>(found)) & (kFreshEnds - 1));
      return true;
    }
    std::uint64_t seq;
    if (!st.recent_frees.find(address, seq)) return false;
    index = n + kFreshEnds + static_cast<std::uint64_t>(st.recent_frees.rank_of(seq));
    return true;
  }
  // False when `index` names no candidate.
  bool address_at(std::uint64_t index, std::uint64_t& address) const {
    if (index < n) {
      address = same_class->address[index];
      return true;
    }
    if (index - n < kFreshEnds) {
      address = st.fresh_end(static_cast<int>(index - n));
      return address != 0;
    }
    std::uint64_t seq;
    if (!st.recent_frees.seq_at(index - n - kFreshEnds, seq)) return false;
    address = st.recent_frees.ring[RecentFrees::slot(seq)];
    return true;
  }
};

}  // namespace memtrail::format::reference
