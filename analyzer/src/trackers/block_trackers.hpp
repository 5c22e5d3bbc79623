// The Engine's block trackers (block_tracker.hpp), a compile-time list: a new
// per-block metric is its file in trackers/ and one name in BlockTrackers
// below. Each hook of the list calls that hook of every tracker in order,
// inline; finish() runs in the same order.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>

#include "trackers/counters.hpp"
#include "trackers/large_blocks.hpp"
#include "trackers/leak_counts.hpp"
#include "trackers/lifetime_histogram.hpp"
#include "trackers/pool_timelines.hpp"
#include "trackers/scopes.hpp"
#include "trackers/size_histogram.hpp"
#include "trackers/temporaries.hpp"
#include "trackers/used_timeline.hpp"

namespace memtrail::detail {

template <class... Trackers>
class BlockTrackerList {
 public:
  explicit BlockTrackerList(const AnalysisOptions& o) : trackers_(Trackers(o)...) {}

  // Each tracker's record of one pool, held in the Engine's pool state
  // (block_tracker.hpp's PoolData); by index, as several trackers share the
  // base's empty record.
  using PoolData = std::tuple<typename Trackers::PoolData...>;
  // And of one site, held in the Engine's site state.
  using SiteData = std::tuple<typename Trackers::SiteData...>;

  template <class T>
  [[gnu::always_inline]] T& get() {
    return std::get<T>(trackers_);
  }

  // Folds over the list with std::get, not std::apply: GCC left
  // std::apply's call out of line in the Engine's event loop (cachegrind on
  // tight-pairs: 16 instructions more per free).
  void pools_grew(std::uint32_t count) { (get<Trackers>().pools_grew(count), ...); }
  void init_pool(PoolData& d) { (get<Trackers>().init_pool(of<Trackers>(d)), ...); }
  void sites_grew(std::uint32_t count) { (get<Trackers>().sites_grew(count), ...); }
  [[gnu::always_inline]] void on_alloc(PoolData& d, SiteData& sd, std::uint32_t pool_slot,
                                       std::uint32_t site, const Event& e) {
    (get<Trackers>().on_alloc(of<Trackers>(d), of<Trackers>(sd), pool_slot, site, e), ...);
  }
  void on_late_free(PoolData& d) { (get<Trackers>().on_late_free(of<Trackers>(d)), ...); }
  void on_range_begin(PoolData& d, std::uint64_t t, const PoolLive& p) {
    (get<Trackers>().on_range_begin(of<Trackers>(d), t, p), ...);
  }
  [[gnu::always_inline]] void on_live(const Event& e) { (get<Trackers>().on_live(e), ...); }
  [[gnu::always_inline]] void on_release(PoolData& d, const ReleasedBlock& r) {
    (get<Trackers>().on_release(of<Trackers>(d), r), ...);
  }
  [[gnu::always_inline]] void on_process_used(std::uint64_t t, std::uint64_t used) {
    (get<Trackers>().on_process_used(t, used), ...);
  }
  [[gnu::always_inline]] void on_pool_used(PoolData& d, std::uint64_t t, const PoolLive& p,
                                           std::uint64_t events) {
    (get<Trackers>().on_pool_used(of<Trackers>(d), t, p, events), ...);
  }
  void on_segment(PoolData& d, const Event& e) {
    (get<Trackers>().on_segment(of<Trackers>(d), e), ...);
  }
  void on_pool_reserved(PoolData& d, std::uint64_t t, const PoolLive& p, std::uint64_t events) {
    (get<Trackers>().on_pool_reserved(of<Trackers>(d), t, p, events), ...);
  }
  void on_pool_at_range_end(PoolData& d, std::uint64_t t, const PoolLive& p) {
    (get<Trackers>().on_pool_at_range_end(of<Trackers>(d), t, p), ...);
  }
  void on_pool_out(PoolData& d, PoolStats& out) {
    (get<Trackers>().on_pool_out(of<Trackers>(d), out), ...);
  }
  void on_site_out(SiteData& d, Site& out) {
    (get<Trackers>().on_site_out(of<Trackers>(d), out), ...);
  }
  void on_leak(std::uint32_t pool_slot, std::uint64_t address, const LiveBlock& b, LeakClass cls) {
    (get<Trackers>().on_leak(pool_slot, address, b, cls), ...);
  }
  void on_unclassed_leak(std::uint32_t pool_slot, const LiveBlock& b, UnclassedLeak why) {
    (get<Trackers>().on_unclassed_leak(pool_slot, b, why), ...);
  }
  void on_scope_bytes(std::uint32_t scope, std::uint32_t entry, bool once, std::int64_t delta,
                      std::uint32_t site, std::uint64_t entries) {
    (get<Trackers>().on_scope_bytes(scope, entry, once, delta, site, entries), ...);
  }
  void on_scope_entry_end(std::uint32_t scope, std::uint32_t entry, std::uint64_t entries,
                          std::uint64_t time_ns) {
    (get<Trackers>().on_scope_entry_end(scope, entry, entries, time_ns), ...);
  }
  void on_range_end() { (get<Trackers>().on_range_end(), ...); }
  void on_scope_out(std::uint32_t scope) { (get<Trackers>().on_scope_out(scope), ...); }
  void finish(Analysis& a) { (get<Trackers>().finish(a), ...); }

 private:
  template <class T>
  static constexpr std::size_t index_of() {
    constexpr bool is_t[] = {std::is_same_v<T, Trackers>...};
    std::size_t i = 0;
    while (!is_t[i]) ++i;
    return i;
  }
  // Tracker T's record in a pool's PoolData or a site's SiteData.
  template <class T, class Data>
  [[gnu::always_inline]] static auto& of(Data& d) {
    return std::get<index_of<T>()>(d);
  }

  std::tuple<Trackers...> trackers_;
};

using BlockTrackers =
    BlockTrackerList<SizeHistogramTracker, LifetimeHistogramTracker, LargeBlocksTracker,
                     UsedTimelineTracker, TemporariesTracker, ScopeGrowthTracker,
                     PoolTimelinesTracker, LeakCountsTracker, CountersTracker>;

}  // namespace memtrail::detail
