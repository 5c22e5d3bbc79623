// Each pool's used and reserved bytes over the range, decimated to
// AnalysisOptions::timeline_points (PoolStats::used and reserved: the
// report's pool charts, the JSON's and the Chrome export's pool series, the
// GUI's timeline), their peaks (PoolStats::peak_used_*, peak_reserved_*:
// the report's POOLS, `check`'s per-pool gates), and its fragmentation sampled over the range and
// at the range's end (PoolStats::fragmentation, final_fragmentation: the report's POOLS
// fragmentation, the GUI's Fragmentation view). One tracker for both: a fragmentation sample is
// taken at most once per timeline bucket, so its cadence is the timeline's.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "decimator.hpp"
#include "trackers/block_tracker.hpp"

namespace memtrail::detail {

class PoolTimelinesTracker : public BlockTracker {
 public:
  explicit PoolTimelinesTracker(const AnalysisOptions& o) : points_(o.timeline_points) {}

  void pools_grew(std::uint32_t count) {
    while (pools_.size() < count) pools_.emplace_back(points_);
  }
  // Replays that stop at a moment need the state, not the samples (a sample
  // sorts the pool's live blocks).
  void set_sample_fragmentation(bool on) { sample_fragmentation_ = on; }

  // The range opens with the state replayed so far: that is its first peak.
  void on_range_begin(std::uint32_t slot, std::uint64_t t, const PoolLive& p) {
    pools_[slot].peak_used = {p.used, t};
    pools_[slot].peak_reserved = {p.reserved, t};
  }
  [[gnu::always_inline]] void on_pool_used(std::uint32_t slot, std::uint64_t t, const PoolLive& p,
                                           std::uint64_t events) {
    Pool& pool = pools_[slot];
    if (p.used > pool.peak_used.bytes) pool.peak_used = {p.used, t};
    record(pool, t, p, events);
  }
  void on_pool_reserved(std::uint32_t slot, std::uint64_t t, const PoolLive& p,
                        std::uint64_t events) {
    Pool& pool = pools_[slot];
    if (p.reserved > pool.peak_reserved.bytes) pool.peak_reserved = {p.reserved, t};
    record(pool, t, p, events);
  }
  void on_pool_at_range_end(std::uint32_t slot, std::uint64_t t, const PoolLive& p);
  // Into the Analysis' pools, by their slot (PoolStats::info.id).
  void finish(Analysis& a);

 private:
  struct Peak {
    std::uint64_t bytes = 0, time_ns = 0;
  };
  // A power-of-two stride: finding a pool's record on every alloc and free
  // is a shift, not a multiplication (cachegrind: 2 instructions an event).
  struct alignas(256) Pool {
    explicit Pool(std::size_t points) : timeline(2, points) {}
    Decimator timeline;  // used, reserved
    Peak peak_used, peak_reserved;
    std::vector<Fragmentation> fragmentation;
    Fragmentation final_fragmentation;
    // The next sample waits for both (sample()).
    std::uint64_t next_sample_ns = 0, next_sample_event = 0;
  };

  static_assert(sizeof(Pool) == 256);

  [[gnu::always_inline]] void record(Pool& pool, std::uint64_t t, const PoolLive& p,
                                     std::uint64_t events) {
    std::uint64_t values[2] = {p.used, p.reserved};
    pool.timeline.record_n<2>(t, values);
    if (!p.has_segments || !p.has_blocks || !sample_fragmentation_) return;
    // A pool left with no live block and at most one segment has no external
    // fragmentation: sampled at once when the last sample said otherwise (it
    // costs nothing), or the series would hold the pool's last busy sample to
    // the end of the trace while a segment map of the moment shows 0 %.
    const bool drained = p.live.size() == 0 && p.segments.size() <= 1 &&
                         (pool.fragmentation.empty() || pool.fragmentation.back().external != 0);
    if ((t >= pool.next_sample_ns && events >= pool.next_sample_event) || drained)
      sample(pool, t, p, events);
  }
  void sample(Pool& pool, std::uint64_t t, const PoolLive& p, std::uint64_t events);
  // The pool's live blocks as (address, size), in scratch_.
  std::vector<std::pair<std::uint64_t, std::uint64_t>>& blocks_of(const PoolLive& p);

  std::size_t points_;
  bool sample_fragmentation_ = true;
  std::vector<Pool> pools_;  // by the Engine's pool slot
  std::vector<std::pair<std::uint64_t, std::uint64_t>> scratch_;
};

}  // namespace memtrail::detail
