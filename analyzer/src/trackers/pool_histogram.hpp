// A log2 histogram per pool, for the block trackers of sizes and lifetimes:
// the process-wide histogram is the leaf pools' sum, taken at the end
// because a pool may turn out to be an upstream (its blocks are the
// segments of the pools above it) only after its first events, when the
// pool above it registers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "memtrail/analysis.hpp"

namespace memtrail::detail {

class PoolHistograms {
 public:
  void pools_grew(std::uint32_t count) { per_pool_.resize(count); }

  // Bucket i holds the values in [2^i, 2^(i+1)) (0 and 1 in bucket 0).
  [[gnu::always_inline]] void add(std::uint32_t pool_slot, std::uint64_t value) {
    Histogram& h = per_pool_[pool_slot];
    if (h.counts.empty()) {  // the first value of this pool
      h.counts.assign(64, 0);
      h.sums.assign(64, 0);
    }
    const std::size_t b = value < 2 ? 0 : 63 - static_cast<std::size_t>(__builtin_clzll(value));
    ++h.counts[b];
    h.sums[b] += value;
  }

  // The sum over the Analysis' leaf pools (PoolStats::upstream false); 64
  // empty buckets when none has a value.
  Histogram leaf_sum(const Analysis& a) const {
    Histogram total;
    total.counts.assign(64, 0);
    total.sums.assign(64, 0);
    for (const PoolStats& p : a.pools) {
      if (p.upstream || p.info.id >= per_pool_.size()) continue;
      const Histogram& h = per_pool_[p.info.id];
      for (std::size_t i = 0; i < h.counts.size(); ++i) {
        total.counts[i] += h.counts[i];
        total.sums[i] += h.sums[i];
      }
    }
    return total;
  }

 private:
  std::vector<Histogram> per_pool_;  // by the Engine's pool slot
};

}  // namespace memtrail::detail
