#include "block_slices.hpp"

#include <algorithm>
#include <tuple>

#include "largest_blocks.hpp"

namespace memtrail::detail {

namespace {
constexpr unsigned kLevels = 8;  // log2(kSlices)
static_assert(BlockSlices::kSlices == std::size_t{1} << kLevels);
}  // namespace

void BlockSlices::start(std::uint64_t origin_ns) {
  if (started_) return;
  started_ = true;
  origin_ = origin_ns;
}

void BlockSlices::insert(std::vector<BlockLifetime>& node, const BlockLifetime& b) {
  keep_largest(node, b, kPerNode);
}

void BlockSlices::record(const BlockLifetime& b, std::uint64_t end_ns) {
  start(b.alloc_ns);
  const bool live = b.free_ns == kTimeMax;
  const std::uint64_t end = live ? std::max(end_ns, b.alloc_ns) : b.free_ns;
  while (slice_of(end) >= kSlices) double_width();
  // The canonical nodes covering slices [slice_of(alloc), slice_of(end)];
  // a block live at the end (recorded after the last event) covers the rest.
  std::size_t l = slice_of(b.alloc_ns) + kSlices;
  std::size_t r = (live ? kSlices - 1 : slice_of(end)) + kSlices + 1;
  for (; l < r; l >>= 1, r >>= 1) {
    if (l & 1) insert(nodes_[l++], b);
    if (r & 1) insert(nodes_[--r], b);
  }
}

void BlockSlices::double_width() {
  // A node at depth d, index i spans the same time as the node at depth
  // d + 1, index i of the doubled tree; two old slices merge into one.
  std::vector<std::vector<BlockLifetime>> next(2 * kSlices);
  for (unsigned d = 0; d < kLevels; ++d)
    for (std::size_t i = 0; i < (std::size_t{1} << d); ++i)
      next[(std::size_t{2} << d) + i] = std::move(nodes_[(std::size_t{1} << d) + i]);
  // A block filed in two nodes that now fall into one slice is kept once.
  auto key = [](const BlockLifetime& b) { return std::tie(b.pool, b.address, b.alloc_ns); };
  for (std::size_t i = 0; i < kSlices / 2; ++i) {
    std::vector<BlockLifetime>& leaf = next[kSlices + i];
    for (std::size_t k : {2 * i, 2 * i + 1})
      leaf.insert(leaf.end(), nodes_[kSlices + k].begin(), nodes_[kSlices + k].end());
    std::sort(leaf.begin(), leaf.end(),
              [&](const auto& x, const auto& y) { return key(x) < key(y); });
    leaf.erase(std::unique(leaf.begin(), leaf.end(),
                           [&](const auto& x, const auto& y) { return key(x) == key(y); }),
               leaf.end());
    if (leaf.size() > kPerNode) {
      std::nth_element(leaf.begin(), leaf.begin() + kPerNode - 1, leaf.end(),
                       [](const auto& x, const auto& y) { return x.size > y.size; });
      leaf.resize(kPerNode);
    }
    std::make_heap(leaf.begin(), leaf.end(), smaller_on_top);
  }
  nodes_ = std::move(next);
  ++shift_;
}

void BlockSlices::collect(std::uint64_t t0, std::uint64_t t1,
                          std::vector<BlockLifetime>& out) const {
  if (!started_ || t1 < t0 || t1 < origin_) return;
  const std::size_t a = slice_of(t0), b = std::min(slice_of(t1), kSlices - 1);
  if (a > b) return;
  for (unsigned d = 0; d <= kLevels; ++d) {
    const unsigned up = kLevels - d;
    for (std::size_t i = a >> up; i <= b >> up; ++i)
      for (const BlockLifetime& x : nodes_[(std::size_t{1} << d) + i])
        if (x.alloc_ns <= t1 && x.free_ns >= t0) out.push_back(x);
  }
}

}  // namespace memtrail::detail
