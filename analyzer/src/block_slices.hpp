// The largest blocks of every time slice, kept during a session's pass so
// that largest_blocks(t0, t1, n) answers for any range, whatever the block
// sizes. The trace is cut into kSlices slices (their width a power of two of
// nanoseconds, doubled as the trace grows); a block is filed, when it is
// freed (or at the end), in the nodes of a segment tree over the slices
// that exactly cover the slices its lifetime overlaps, and each node keeps
// its kPerNode largest blocks. Every block in a node overlaps every slice
// under it, so the nodes above a slice hold the kPerNode largest blocks
// overlapping that slice. Memory: (2 kSlices - 1) x kPerNode blocks.
#pragma once

#include <cstdint>
#include <vector>

#include "memtrail/analysis.hpp"

namespace memtrail::detail {

class BlockSlices {
 public:
  static constexpr std::size_t kSlices = 256, kPerNode = 64;

  BlockSlices() : nodes_(2 * kSlices) {}
  // The time of the trace's first event (slice 0 starts there).
  void start(std::uint64_t origin_ns);
  // A block whose lifetime ended (free_ns) or that is still live at
  // `end_ns`, the last event time (free_ns == kTimeMax).
  void record(const BlockLifetime& b, std::uint64_t end_ns);
  // Appends every kept block whose lifetime overlaps [t0, t1] (a block may
  // come more than once).
  void collect(std::uint64_t t0, std::uint64_t t1, std::vector<BlockLifetime>& out) const;
  std::uint64_t origin_ns() const { return origin_; }
  std::uint64_t slice_ns() const { return std::uint64_t{1} << shift_; }

 private:
  std::size_t slice_of(std::uint64_t t) const {
    return t <= origin_ ? 0 : static_cast<std::size_t>((t - origin_) >> shift_);
  }
  void insert(std::vector<BlockLifetime>& node, const BlockLifetime& b);
  void double_width();
  // Node 1 is the root, nodes kSlices .. 2 kSlices - 1 the slices; each a
  // min-heap by size.
  std::vector<std::vector<BlockLifetime>> nodes_;
  std::uint64_t origin_ = 0;
  unsigned shift_ = 0;
  bool started_ = false;
};

}  // namespace memtrail::detail
