// The Engine's block trackers (block_tracker.hpp), a compile-time list: a new
// per-block metric is its file in trackers/ and one name in BlockTrackers
// below. Each hook of the list calls that hook of every tracker in order,
// inline; finish() runs in the same order.
#pragma once

#include <tuple>

#include "trackers/large_blocks.hpp"
#include "trackers/lifetime_histogram.hpp"
#include "trackers/size_histogram.hpp"
#include "trackers/used_timeline.hpp"

namespace memtrail::detail {

template <class... Trackers>
class BlockTrackerList {
 public:
  explicit BlockTrackerList(const AnalysisOptions& o) : trackers_(Trackers(o)...) {}

  template <class T>
  T& get() {
    return std::get<T>(trackers_);
  }

  void pools_grew(std::uint32_t count) {
    std::apply([&](auto&... t) { (t.pools_grew(count), ...); }, trackers_);
  }
  [[gnu::always_inline]] void on_alloc(std::uint32_t pool_slot, const Event& e) {
    std::apply([&](auto&... t) { (t.on_alloc(pool_slot, e), ...); }, trackers_);
  }
  [[gnu::always_inline]] void on_release(const ReleasedBlock& r) {
    std::apply([&](auto&... t) { (t.on_release(r), ...); }, trackers_);
  }
  [[gnu::always_inline]] void on_process_used(std::uint64_t t_ns, std::uint64_t used) {
    std::apply([&](auto&... t) { (t.on_process_used(t_ns, used), ...); }, trackers_);
  }
  void on_leak(std::uint32_t pool_slot, std::uint64_t address, const LiveBlock& b, LeakClass cls) {
    std::apply([&](auto&... t) { (t.on_leak(pool_slot, address, b, cls), ...); }, trackers_);
  }
  void finish(Analysis& a) {
    std::apply([&](auto&... t) { (t.finish(a), ...); }, trackers_);
  }

 private:
  std::tuple<Trackers...> trackers_;
};

using BlockTrackers = BlockTrackerList<SizeHistogramTracker, LifetimeHistogramTracker,
                                       LargeBlocksTracker, UsedTimelineTracker>;

}  // namespace memtrail::detail
