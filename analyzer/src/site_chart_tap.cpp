// The site charts' per-bucket accumulation (site_chart_tap.hpp).
#include "site_chart_tap.hpp"

#include <algorithm>

namespace memtrail::detail {

SiteChartTap::SiteChartTap(ChartCost cost, std::size_t series, std::uint64_t t0, std::uint64_t t1,
                           std::size_t buckets, bool whole_trace, Resolver resolver)
    : cost_(cost),
      whole_trace_(whole_trace),
      series_(series),
      buckets_(std::max<std::size_t>(buckets, 1)),
      t0_(t0),
      t1_(std::max(t0, t1)),
      resolver_(std::move(resolver)),
      before_(series, 0),
      delta_(series * buckets_, 0) {
  // Equal buckets covering [t0, t1] whole: the last one ends past t1.
  const std::uint64_t span = t1_ - t0_;
  step_ = span / buckets_ + 1;
}

void SiteChartTap::add(std::uint8_t series, std::uint64_t t, std::int64_t delta) {
  if (series >= series_) return;
  // Counts come only for what the Engine took as the range's, whatever the
  // event's time: into the nearest bucket. Live bytes change at their
  // event's time: none after t1, and before t0 they are what the range
  // starts from (of the whole trace: in its first and last buckets).
  const bool counts = cost_ != ChartCost::consumed;
  if (t > t1_) {
    if (!counts && !whole_trace_) return;
    t = t1_;
  }
  if (t < t0_) {
    if (!counts && !whole_trace_) {
      before_[series] += delta;
      return;
    }
    t = t0_;
  }
  std::size_t bucket = std::min<std::uint64_t>((t - t0_) / step_, buckets_ - 1);
  delta_[series * buckets_ + bucket] += delta;
}

std::vector<std::vector<std::uint64_t>> SiteChartTap::values() const {
  std::vector<std::vector<std::uint64_t>> out(series_, std::vector<std::uint64_t>(buckets_));
  for (std::size_t s = 0; s < series_; ++s) {
    // Counts start at 0 at t0; live bytes start from what the blocks
    // allocated before the range still held.
    std::int64_t v = cost_ == ChartCost::consumed ? before_[s] : 0;
    for (std::size_t b = 0; b < buckets_; ++b) {
      v += delta_[s * buckets_ + b];
      out[s][b] = static_cast<std::uint64_t>(std::max<std::int64_t>(v, 0));
    }
  }
  return out;
}

}  // namespace memtrail::detail
