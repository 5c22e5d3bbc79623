// Temporary allocations (Site::temporaries, Summary::temporary_allocations:
// the report's TOP SITES BY TEMPORARY ALLOCATIONS, the JSON's, the call
// tree's and the folded export's temporary cost, the GUI's Temporary
// charts). heaptrack's rule: a block freed by the thread that allocated it
// before that thread allocated anything else, its alloc and its free both
// in the range.
//
// Counted per site only, and summed over the leaf pools' sites at the end:
// every free of tight-pairs is a temporary, and a second counter per pool
// cost more instructions than the pool sum at the end (cachegrind).
#pragma once

#include <cstdint>
#include <vector>

#include "trackers/block_tracker.hpp"

namespace memtrail::detail {

class TemporariesTracker : public BlockTracker {
 public:
  explicit TemporariesTracker(const AnalysisOptions& /*o*/) {}

  // The thread's newest block, until its next allocation or that block's free.
  [[gnu::always_inline]] void on_live(const Event& e) {
    last_of(e.thread) = LastAlloc{e.address, e.pool | kPending};
  }
  [[gnu::always_inline]] void on_release(PoolData& /*pool*/, const ReleasedBlock& r) {
    LastAlloc& last = last_of(r.thread);
    if (last.address != r.address || last.pool_tag != (r.pool | kPending) ||
        r.block.thread != r.thread)
      return;
    last.pool_tag = 0;
    if (r.in_range && r.block.in_range) count_at_site(r.block.site);
  }
  // The temporaries of site `site` (the Engine's index) so far: the site
  // charts' Temporary cost asks before and after a release.
  std::uint64_t at_site(std::uint32_t site) const {
    return site < per_site_.size() ? per_site_[site] : 0;
  }
  // Into the sites (by the Engine's index, the Analysis' order) and the
  // summary, over the leaf pools' sites.
  void finish(Analysis& a);

 private:
  // The pool (as recorded) and whether the block is still live, in one word:
  // the free's check is one compare (cachegrind: a separate flag cost
  // tight-pairs 2 instructions per free).
  static constexpr std::uint64_t kPending = std::uint64_t{1} << 32;
  struct LastAlloc {
    std::uint64_t address = 0;
    std::uint64_t pool_tag = 0;  // pool | kPending; 0: none pending
  };
  // thread_slots_ is last_by_thread_.size(), kept apart as the Engine keeps
  // its thread count: size() is a subtraction and a shift per event.
  [[gnu::always_inline]] LastAlloc& last_of(std::uint32_t thread) {
    if (thread < thread_slots_) [[likely]]
      return last_by_thread_[thread];
    return grow_threads(thread);
  }
  LastAlloc& grow_threads(std::uint32_t thread);
  [[gnu::always_inline]] void count_at_site(std::uint32_t site) {
    if (site >= per_site_.size()) [[unlikely]]
      grow_sites(site);
    ++per_site_[site];
  }
  void grow_sites(std::uint32_t site);

  std::vector<LastAlloc> last_by_thread_;
  std::uint32_t thread_slots_ = 0;
  std::vector<std::uint64_t> per_site_;  // by the Engine's site index
};

}  // namespace memtrail::detail
