// The session's multi-resolution min/max index of one time series, built in
// the analysis pass. Level 0 is a streaming row of at most `max_buckets`
// buckets of 2^shift ns (absolute indices t >> shift, starting at the
// series' first value); whenever a new bucket would pass the limit, adjacent
// pairs merge and the width doubles. Each bucket keeps the min, max and last
// value seen in it, including the value carried in from before it (a bucket
// with no event holds the carried value), so min/max are exact at the
// bucket's resolution. finish() builds the coarser levels (each halving the
// one below) so a query folds at most ~5 buckets per point at any zoom.
#pragma once

#include <cstdint>
#include <vector>

#include "memtrail/session.hpp"

namespace memtrail::detail {

struct MinMax {
  std::uint64_t min = 0, max = 0, last = 0;
};

class SeriesTrack {
 public:
  explicit SeriesTrack(std::size_t max_buckets = 1 << 16)
      : max_buckets_(max_buckets < 2 ? 2 : max_buckets) {}
  // cur_ points into rows_: a copy points into its own.
  SeriesTrack(const SeriesTrack& o)
      : max_buckets_(o.max_buckets_),
        shift_(o.shift_),
        first_(o.first_),
        next_bucket_ns_(o.next_bucket_ns_),
        rows_(o.rows_) {
    cur_ = rows_[0].empty() ? nullptr : &rows_[0].back();
  }
  SeriesTrack& operator=(const SeriesTrack& o) {
    SeriesTrack copy(o);
    *this = std::move(copy);
    return *this;
  }
  SeriesTrack(SeriesTrack&&) noexcept = default;  // the buffer (and cur_) moves along
  SeriesTrack& operator=(SeriesTrack&&) noexcept = default;

  // The series took `v` at time t (times mostly non-decreasing; a late one
  // folds into the current bucket).
  [[gnu::always_inline]] void record(std::uint64_t t, std::uint64_t v) {
    if (t < next_bucket_ns_) [[likely]] {
      MinMax& b = *cur_;  // the last bucket of level 0
      if (v < b.min) b.min = v;
      if (v > b.max) b.max = v;
      b.last = v;
      return;
    }
    record_new_bucket(t, v);
  }
  bool empty() const { return rows_[0].empty(); }

  // Builds the levels above level 0. Call once, after the pass.
  void finish();

  // The envelope over [t0, t1] in `points` buckets (session.hpp: Envelope).
  // The caller clamped t0, t1 and checked points > 0 and t0 <= t1.
  Envelope query(std::uint64_t t0, std::uint64_t t1, std::size_t points) const;
  // The value at t at level-0 resolution: the last value of the bucket
  // holding t (the value carried past the last bucket); false before the
  // first value.
  bool value_at(std::uint64_t t, std::uint64_t& v) const;

  std::size_t memory_bytes() const;

 private:
  void record_new_bucket(std::uint64_t t, std::uint64_t v);
  void halve();
  // Folds the buckets of `level` overlapping [a, b) into `out`; false if
  // none holds data.
  bool fold(std::size_t level, std::uint64_t a, std::uint64_t b, MinMax& out) const;

  std::size_t max_buckets_;
  unsigned shift_ = 0;                        // level 0 bucket width = 2^shift_ ns
  std::uint64_t first_ = 0;                   // absolute index of rows_[0][0] (level 0)
  std::uint64_t next_bucket_ns_ = 0;          // start of the bucket after the last; 0 while empty
  std::vector<std::vector<MinMax>> rows_{1};  // rows_[k]: level k, width 2^(shift_+k)
  MinMax* cur_ = nullptr;                     // &rows_[0].back() once there is one
};

}  // namespace memtrail::detail
