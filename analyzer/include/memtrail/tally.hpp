// A count of blocks and their bytes: how the analysis tallies leaks, live
// blocks and suppressed blocks, so a figure and its block count always
// travel together (`s.direct.bytes`, `s.direct.blocks`).
#pragma once

#include <cstdint>

namespace memtrail {

struct Tally {
  std::uint64_t bytes = 0, blocks = 0;

  // One more block of `size` bytes.
  void add(std::uint64_t size) {
    bytes += size;
    ++blocks;
  }
  Tally& operator+=(const Tally& o) {
    bytes += o.bytes;
    blocks += o.blocks;
    return *this;
  }
  friend Tally operator+(Tally a, const Tally& b) { return a += b; }
  bool operator==(const Tally&) const = default;
};

}  // namespace memtrail
