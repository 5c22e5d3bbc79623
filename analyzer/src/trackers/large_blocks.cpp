// The large blocks' heap and their order in the Analysis (large_blocks.hpp).
#include "trackers/large_blocks.hpp"

#include <algorithm>

namespace memtrail::detail {
namespace {

bool larger_first(const BlockLifetime& a, const BlockLifetime& b) {
  return a.size > b.size;
}

}  // namespace

void LargeBlocksTracker::keep(const BlockLifetime& b) {
  if (max_blocks_ == 0) return;
  auto& heap = smallest_first_;
  if (heap.size() < max_blocks_) {
    heap.push_back(b);
    std::push_heap(heap.begin(), heap.end(), larger_first);
  } else if (b.size > heap.front().size) {
    std::pop_heap(heap.begin(), heap.end(), larger_first);
    heap.back() = b;
    std::push_heap(heap.begin(), heap.end(), larger_first);
  }
}

void LargeBlocksTracker::finish(Analysis& a) {
  std::sort(smallest_first_.begin(), smallest_first_.end(),
            [](const BlockLifetime& x, const BlockLifetime& y) { return x.alloc_ns < y.alloc_ns; });
  a.large_blocks = std::move(smallest_first_);
}

}  // namespace memtrail::detail
