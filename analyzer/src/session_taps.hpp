// What the Engine hands a session during its pass besides the Analysis:
// every change of a pool's used/reserved bytes and of the process-wide used
// bytes (the series index), the samples, the scope entries with their
// nesting, the oom events and the largest blocks per time slice. Set with Engine::set_taps();
// analyze() has none, so its pass pays one predictable branch per state change.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "block_slices.hpp"
#include "memtrail/event.hpp"
#include "memtrail/session.hpp"
#include "series_index.hpp"

namespace memtrail::detail {

class SessionTaps {
 public:
  SessionTaps(std::size_t series_buckets, std::size_t max_scopes, std::size_t max_ooms)
      : process_used_(series_buckets),
        buckets_(series_buckets),
        max_scopes_(max_scopes),
        max_ooms_(max_ooms) {
    // Samples come every ~10 ms: 1/16 of the buckets keeps each sample in
    // a bucket of its own for traces up to ~40 s, at 1/16 of the memory.
    for (auto& s : samples_) s = SeriesTrack(std::max<std::size_t>(2, series_buckets / 16));
  }

  [[gnu::always_inline]] void pool_used(std::uint32_t pool, std::uint64_t t, std::uint64_t v) {
    if (pool >= used_.size()) [[unlikely]]
      if (!grow(pool)) return;
    used_[pool].record(t, v);
  }
  // The process-wide used bytes changed through leaf pool `pool`. While one
  // pool is the only one, its own series is the process's: nothing is
  // recorded twice (the common one-heap trace pays one series per event).
  [[gnu::always_inline]] void process_used(std::uint32_t pool, std::uint64_t t, std::uint64_t v) {
    if (!several_leaves_) [[likely]] {
      if (pool == only_leaf_) [[likely]]
        return;
      if (!second_leaf(pool)) return;
    }
    process_used_.record(t, v);
  }
  // The process-wide series (the only leaf pool's while there is one).
  const SeriesTrack& process_series() const {
    return several_leaves_ || only_leaf_ >= used_.size() ? process_used_ : used_[only_leaf_];
  }
  void pool_reserved(std::uint32_t pool, std::uint64_t t, std::uint64_t v) {
    if (pool >= used_.size() && !grow(pool)) return;
    reserved_[pool].record(t, v);
  }
  // A block freed (or live at the end: free_ns kTimeMax, last event at end_ns).
  void block(const BlockLifetime& b, std::uint64_t end_ns) { blocks_.record(b, end_ns); }
  void sample(const Event& e);
  void oom(const Event& e, std::string message);
  void scope_begin(const Event& e, std::uint32_t scope);
  void scope_end(const Event& e, std::uint32_t scope);

  // Builds the series levels; open scope entries stay open (kTimeMax).
  void finish();

  std::vector<SeriesTrack> used_, reserved_;  // by pool id; empty() = never changed
  SeriesTrack process_used_;
  SeriesTrack samples_[4];             // rss, heap used, heap reserved, device free
  std::vector<ScopeInterval> scopes_;  // by begin time (file order)
  std::vector<OomEvent> ooms_;
  BlockSlices blocks_;  // the largest blocks of every time slice
  std::uint64_t dropped_scopes_ = 0;
  // Entries so far per scope id, counted before any are dropped, so that an
  // entry keeps its number (the GUI's "iteration N") however many are kept.
  std::unordered_map<std::uint32_t, std::uint64_t> scope_entries_;
  bool any_device_free_ = false;
  // (time, heap reserved) of every sample, for breakdown(t) exactly; past
  // 2^16 of them every other one is dropped.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> heap_reserved_;

 private:
  // False past the Engine's pool limit (a hostile id): no series for it.
  bool grow(std::uint32_t pool);
  // A leaf pool other than only_leaf_: the first one becomes only_leaf_ (false:
  // nothing to record); a second one starts process_used_ from the first's
  // series, which was the process's until now.
  bool second_leaf(std::uint32_t pool);
  static constexpr std::uint32_t kNoPool = ~std::uint32_t{0};
  std::uint32_t only_leaf_ = kNoPool;
  bool several_leaves_ = false;
  std::size_t buckets_, max_scopes_, max_ooms_;
  // Per thread: ordinals (scopes_ index + base_) of the open entries,
  // innermost last. Past 2 * max_scopes_ the older half is dropped.
  std::vector<std::vector<std::uint64_t>> open_;
  std::uint64_t base_ = 0;
};

}  // namespace memtrail::detail
