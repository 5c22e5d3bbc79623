// The fragmentation of a pool's segments at one moment (pool_live.hpp).
#include "pool_live.hpp"

#include <algorithm>

namespace memtrail::detail {

Fragmentation compute_fragmentation(const SegmentTable& segments,
                                    std::vector<std::pair<std::uint64_t, std::uint64_t>>& blocks,
                                    std::uint64_t time_ns) {
  Fragmentation f;
  f.time_ns = time_ns;
  std::sort(blocks.begin(), blocks.end());
  for (auto& [a, s] : blocks) f.used_bytes += s;
  std::size_t bi = 0;
  auto it = segments.begin();
  while (it != segments.end()) {
    // One range: a segment, extended over adjacent `map` segments.
    std::uint64_t lo = it->first, hi = lo + it->second.size;
    bool mapped = it->second.detail == SegmentDetail::map;
    ++it;
    while (mapped && it != segments.end() && it->first == hi &&
           it->second.detail == SegmentDetail::map) {
      hi += it->second.size;
      ++it;
    }
    f.reserved_bytes += hi - lo;
    while (bi < blocks.size() && blocks[bi].first < lo) ++bi;  // outside any segment
    std::uint64_t cursor = lo, free_here = 0, largest = 0;
    bool any_block = false;
    while (bi < blocks.size() && blocks[bi].first < hi) {
      auto [a, s] = blocks[bi++];
      any_block = true;
      if (a > cursor) {
        free_here += a - cursor;
        largest = std::max(largest, a - cursor);
      }
      cursor = std::max(cursor, std::min(hi, a + s));
    }
    if (hi > cursor) {
      free_here += hi - cursor;
      largest = std::max(largest, hi - cursor);
    }
    f.free_bytes += free_here;
    if (any_block) f.free_in_partial_segments += free_here;
    f.largest_free_block = std::max(f.largest_free_block, largest);
  }
  f.external = f.free_bytes ? 1.0 - static_cast<double>(f.largest_free_block) / f.free_bytes : 0;
  return f;
}

}  // namespace memtrail::detail
