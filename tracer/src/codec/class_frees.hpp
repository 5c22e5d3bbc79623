// ClassFrees, the model's freed blocks by chunk class (docs/trace-format.md
// 3.2): newest first, at most kClassDepth per class. A direct-mapped table:
// classes up to 1040 B have their own bucket; larger ones share the rest by
// hash, and a bucket taken over by another class starts empty. Lossy on
// purpose: a forgotten address only costs a delta.
//
// Each bucket's (class, count) head lies apart from the address lists, so
// the class check touches one small array; each list is stored oldest first
// (rank r at count - 1 - r): blocks are mostly taken newest first, so a take
// is a decrement instead of shifting the whole list, and a push appends
// unless the list is full.
#pragma once

#include <array>
#include <cstdint>

#include "../assert_levels.hpp"
#include "../format_layout.hpp"

namespace memtrail::format::codec {

struct ClassFrees {
  struct Head {
    std::uint64_t cls = 0;  // 0: no class (chunk classes are >= 32)
    int count = 0;
  };
  std::array<Head, kClassBuckets> head{};
  std::array<std::array<std::uint64_t, kClassDepth>, kClassBuckets> list{};

  static int bucket_of(std::uint64_t cls) {
    if (cls <= kSmallClassLimit) return static_cast<int>(cls / 16);
    int first = static_cast<int>(kSmallClassLimit / 16) + 1;
    return first + static_cast<int>(((cls / 16) * 0x9e3779b97f4a7c15ull >> 40) %
                                    static_cast<std::uint64_t>(kClassBuckets - first));
  }

  void reset() {  // lists are read only below their count
    for (auto& h : head) h = Head{};
  }

  // How many freed blocks of class `cls` (in its `bucket`) the list holds.
  int count_of(int bucket, std::uint64_t cls) const {
    const Head& h = head[bucket];
    return h.cls == cls ? h.count : 0;
  }
  // The entry of rank `rank` (0 = newest); rank < count_of(bucket, cls).
  std::uint64_t at_rank(int bucket, int rank) const {
    MEMTRAIL_ASSERT_INTERNAL(rank >= 0 && rank < head[bucket].count);
    return list[bucket][head[bucket].count - 1 - rank];
  }
  // The rank of the newest entry equal to `a`, -1 when none.
  int rank_of(int bucket, std::uint64_t cls, std::uint64_t a) const {
    const Head& h = head[bucket];
    if (h.cls != cls) return -1;
    for (int p = h.count - 1; p >= 0; --p)
      if (list[bucket][p] == a) return h.count - 1 - p;
    return -1;
  }

  void push(std::uint64_t cls, std::uint64_t a) {
    int bucket = bucket_of(cls);
    Head& h = head[bucket];
    auto& entries = list[bucket];
    if (h.cls != cls) {
      h.cls = cls;
      h.count = 0;
    }
    if (h.count == kClassDepth) {  // full: the oldest goes
      for (int i = 0; i + 1 < kClassDepth; ++i) entries[i] = entries[i + 1];
      --h.count;
    }
    entries[h.count++] = a;
    MEMTRAIL_ASSERT_INTERNAL(h.count <= kClassDepth);
  }
  // The entry of rank `rank` leaves the list.
  void take_rank(int bucket, int rank) {
    Head& h = head[bucket];
    MEMTRAIL_ASSERT_INTERNAL(rank >= 0 && rank < h.count);
    auto& entries = list[bucket];
    for (int i = h.count - 1 - rank; i + 1 < h.count; ++i) entries[i] = entries[i + 1];
    --h.count;
  }
  // The newest entry equal to `a`, if any, leaves the list.
  void take_address(int bucket, std::uint64_t cls, std::uint64_t a) {
    int rank = rank_of(bucket, cls, a);
    if (rank >= 0) take_rank(bucket, rank);
  }
};

}  // namespace memtrail::format::codec
