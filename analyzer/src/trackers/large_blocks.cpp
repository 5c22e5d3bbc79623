// The large blocks' heap and their order in the Analysis (large_blocks.hpp).
#include "trackers/large_blocks.hpp"

#include <algorithm>

#include "largest_blocks.hpp"

namespace memtrail::detail {

void LargeBlocksTracker::keep(const BlockLifetime& b) {
  keep_largest(smallest_first_, b, max_blocks_);
}

void LargeBlocksTracker::finish(Analysis& a) {
  std::sort(smallest_first_.begin(), smallest_first_.end(),
            [](const BlockLifetime& x, const BlockLifetime& y) { return x.alloc_ns < y.alloc_ns; });
  a.large_blocks = std::move(smallest_first_);
}

}  // namespace memtrail::detail
