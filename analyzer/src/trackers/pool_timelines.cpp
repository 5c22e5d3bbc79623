// The pools' fragmentation samples and their series into the Analysis
// (pool_timelines.hpp).
#include "trackers/pool_timelines.hpp"

namespace memtrail::detail {

std::vector<std::pair<std::uint64_t, std::uint64_t>>& PoolTimelinesTracker::blocks_of(
    const PoolLive& p) {
  scratch_.clear();
  scratch_.reserve(p.live.size());
  p.live.for_each([&](std::uint64_t a, const LiveBlock& b) { scratch_.emplace_back(a, b.size); });
  return scratch_;
}

void PoolTimelinesTracker::sample(PoolData& pool, std::uint64_t t, const PoolLive& p,
                                  std::uint64_t events) {
  // A sample costs a sort of the pool's live blocks. At most one per timeline
  // bucket, and only after kEventsPerBlock events per live block and segment
  // since the last one: sampling stays a small fraction of the pass whatever
  // the live set (2e7 events over 16k blocks: ~150 samples).
  constexpr std::uint64_t kEventsPerBlock = 8;
  pool.fragmentation.push_back(compute_fragmentation(p.segments, blocks_of(p), t));
  pool.next_sample_ns = t + pool.timeline.bucket_width_ns();
  pool.next_sample_event = events + kEventsPerBlock * (p.live.size() + p.segments.size());
  if (pool.fragmentation.size() > 2 * points_) {
    // Thin to every other sample, like the timelines.
    auto& f = pool.fragmentation;
    std::size_t w = 0;
    for (std::size_t r = 0; r < f.size(); r += 2) f[w++] = f[r];
    f.resize(w);
  }
}

void PoolTimelinesTracker::on_pool_at_range_end(PoolData& pool, std::uint64_t t,
                                                const PoolLive& p) {
  if (p.has_segments && p.has_blocks)
    pool.final_fragmentation = compute_fragmentation(p.segments, blocks_of(p), t);
}

void PoolTimelinesTracker::on_pool_out(PoolData& pool, PoolStats& out) {
  out.used = pool.timeline.series(0);
  out.reserved = pool.timeline.series(1);
  out.fragmentation = std::move(pool.fragmentation);
  out.final_fragmentation = pool.final_fragmentation;
  out.peak_used_bytes = pool.peak_used.bytes;
  out.peak_used_time_ns = pool.peak_used.time_ns;
  out.peak_reserved_bytes = pool.peak_reserved.bytes;
  out.peak_reserved_time_ns = pool.peak_reserved.time_ns;
}

}  // namespace memtrail::detail
