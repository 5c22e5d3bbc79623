// The n largest blocks seen so far, kept as a min-heap by size (the
// smallest kept block on top, so a larger newcomer replaces it in log n).
// Shared by the report's large blocks (trackers/large_blocks.cpp) and the
// timeline's per-slice blocks (block_slices.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "memtrail/analysis.hpp"

namespace memtrail::detail {

// The heap's order: the smaller block on top.
inline bool smaller_on_top(const BlockLifetime& x, const BlockLifetime& y) {
  return x.size > y.size;
}

inline void keep_largest(std::vector<BlockLifetime>& heap, const BlockLifetime& b,
                         std::size_t max_blocks) {
  if (max_blocks == 0) return;
  if (heap.size() < max_blocks) {
    heap.push_back(b);
    std::push_heap(heap.begin(), heap.end(), smaller_on_top);
  } else if (b.size > heap.front().size) {
    std::pop_heap(heap.begin(), heap.end(), smaller_on_top);
    heap.back() = b;
    std::push_heap(heap.begin(), heap.end(), smaller_on_top);
  }
}

}  // namespace memtrail::detail
