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

  struct Peak {
    std::uint64_t bytes = 0, time_ns = 0;
  };
  // A pool's series, peaks and samples, in the Engine's record of the pool.
  struct PoolData {
    Decimator timeline{2, 1};  // used, reserved (init_pool sizes it)
    Peak peak_used, peak_reserved;
    std::vector<Fragmentation> fragmentation;
    Fragmentation final_fragmentation;
    // The next sample waits for both (sample()).
    std::uint64_t next_sample_ns = 0, next_sample_event = 0;
  };

  void init_pool(PoolData& pool) { pool.timeline = Decimator(2, points_); }
  // Replays that stop at a moment need the state, not the samples (a sample
  // sorts the pool's live blocks).
  void set_sample_fragmentation(bool on) { sample_fragmentation_ = on; }

  // The range opens with the state replayed so far: that is its first peak.
  void on_range_begin(PoolData& pool, std::uint64_t t, const PoolLive& p) {
    pool.peak_used = {p.used, t};
    pool.peak_reserved = {p.reserved, t};
  }
  [[gnu::always_inline]] void on_pool_used(PoolData& pool, std::uint64_t t, const PoolLive& p,
                                           std::uint64_t events) {
    if (p.used > pool.peak_used.bytes) pool.peak_used = {p.used, t};
    record(pool, t, p, events);
  }
  void on_pool_reserved(PoolData& pool, std::uint64_t t, const PoolLive& p, std::uint64_t events) {
    if (p.reserved > pool.peak_reserved.bytes) pool.peak_reserved = {p.reserved, t};
    record(pool, t, p, events);
  }
  void on_pool_at_range_end(PoolData& pool, std::uint64_t t, const PoolLive& p);
  void on_pool_out(PoolData& pool, PoolStats& out);

 private:
  [[gnu::always_inline]] void record(PoolData& pool, std::uint64_t t, const PoolLive& p,
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
  void sample(PoolData& pool, std::uint64_t t, const PoolLive& p, std::uint64_t events);
  // The pool's live blocks as (address, size), in scratch_.
  std::vector<std::pair<std::uint64_t, std::uint64_t>>& blocks_of(const PoolLive& p);

  std::size_t points_;
  bool sample_fragmentation_ = true;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> scratch_;
};

}  // namespace memtrail::detail
