// What the Engine hands the site charts (memtrail/site_charts.hpp) during
// their pass: each counted allocation, each block added to a pool's live set
// and each block released, by the Engine's site index. It keeps one value
// delta per (charted series, time bucket), so its memory is the charted
// series times the buckets plus one byte per Engine site, whatever the number
// of events. Set with Engine::set_site_tap(); other passes have none and pay
// one predictable branch per block.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "memtrail/site_charts.hpp"

namespace memtrail::detail {

class SiteChartTap {
 public:
  // Which charted series (0..series-1) the allocations of (pool, stack) go
  // to, or kNoSeries to leave them out (an upstream pool's blocks).
  using Resolver = std::function<std::uint8_t(std::uint32_t pool, std::uint32_t stack)>;
  static constexpr std::uint8_t kNoSeries = 0xff;

  // `whole_trace`: [t0, t1] is the whole file, so a block's change at a time
  // outside it (events are in file order, threads' buffers interleave: a few
  // lie before the first chunk's first time or after the last's last)
  // lands in the nearest bucket instead of being left out.
  SiteChartTap(ChartCost cost, std::size_t series, std::uint64_t t0, std::uint64_t t1,
               std::size_t buckets, bool whole_trace, Resolver resolver);

  // An allocation counted in the range (Site::calls).
  void counted(std::uint32_t site, std::uint32_t pool, std::uint32_t stack, std::uint64_t t) {
    if (cost_ == ChartCost::allocations) add(series_of(site, pool, stack), t, 1);
  }
  // A block entered its pool's live set.
  void added(std::uint32_t site, std::uint32_t pool, std::uint32_t stack, std::uint64_t t,
             std::uint64_t size) {
    // Resolved here whatever the cost: released() needs the series.
    const std::uint8_t series = series_of(site, pool, stack);
    if (cost_ == ChartCost::consumed) add(series, t, static_cast<std::int64_t>(size));
  }
  // A block left it (freed or replaced); `temporary`: counted as a temporary
  // allocation of the range (Site::temporaries).
  void released(std::uint32_t site, std::uint64_t t, std::uint64_t size, bool temporary) {
    std::uint8_t s = site < series_of_site_.size() ? series_of_site_[site] : kUnresolved;
    if (s == kUnresolved) return;  // never added in this pass
    if (cost_ == ChartCost::consumed)
      add(s, t, -static_cast<std::int64_t>(size));
    else if (cost_ == ChartCost::temporary && temporary)
      add(s, t, 1);
  }

  // Each series' value at the end of each bucket (series-major).
  std::vector<std::vector<std::uint64_t>> values() const;
  std::uint64_t step_ns() const { return step_; }

 private:
  static constexpr std::uint8_t kUnresolved = 0xfe;
  std::uint8_t series_of(std::uint32_t site, std::uint32_t pool, std::uint32_t stack) {
    if (site >= series_of_site_.size()) series_of_site_.resize(site + 1, kUnresolved);
    std::uint8_t& s = series_of_site_[site];
    if (s == kUnresolved) s = resolver_(pool, stack);
    return s;
  }
  void add(std::uint8_t series, std::uint64_t t, std::int64_t delta);

  ChartCost cost_;
  bool whole_trace_;
  std::size_t series_, buckets_;
  std::uint64_t t0_, t1_, step_;
  Resolver resolver_;
  std::vector<std::uint8_t> series_of_site_;  // by Engine site index
  std::vector<std::int64_t> before_;          // per series: changes before t0
  std::vector<std::int64_t> delta_;           // per series * buckets_ + bucket
};

}  // namespace memtrail::detail
