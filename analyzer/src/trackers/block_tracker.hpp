// The per-block metrics of the analysis pass, a tracker each: the Engine
// calls their hooks from its alloc and free path with no virtual dispatch.
// The list is fixed at compile time (BlockTrackerList, block_trackers.hpp),
// so each hook is an inline call the compiler folds into the Engine's event
// loop, and a hook a tracker does not define costs nothing. A virtual call
// per alloc and free (EngineListener's way) would also keep the compiler from
// folding the trackers' work into the loop, which is the report's hot path.
//
// A block tracker derives from BlockTracker and hides the hooks it needs
// (same name, same parameters); it reads the Engine's live state only
// through them, and puts its figures in the Analysis in finish().
#pragma once

#include <cstdint>

#include "live_block.hpp"
#include "memtrail/analysis.hpp"
#include "pool_live.hpp"

namespace memtrail::detail {

// Thread ids come from a trace that may be hostile: past this, the Engine's
// and the trackers' per-thread state share one overflow slot instead of
// growing a vector to gigabytes.
constexpr std::uint32_t kMaxThreads = 1u << 18;

// The scope id the hooks give the iteration scope of marks
// (AnalysisOptions::iteration_mark); other ids are ScopeInfo::id.
constexpr std::uint32_t kIterationScopeId = ~std::uint32_t{0};

// A block leaving the live set: freed, or replaced by an alloc at its
// address (the free was lost; `in_range` is then false).
struct ReleasedBlock {
  std::uint32_t pool = 0;       // the event's pool id, as recorded
  std::uint32_t pool_slot = 0;  // the Engine's slot of it (Engine::pool_slot)
  std::uint64_t address = 0;
  const LiveBlock& block;
  std::uint64_t time_ns = 0;  // of the free
  std::uint32_t thread = 0;   // the freeing thread (the allocating one for a replaced block)
  bool in_range = false;      // the free is inside the analyzed range
};

// Why a block left live at the end is in no leak class: the C/C++
// runtime's own (Leaks::runtime), or live when the image called exec, never
// classified (Leaks::exec_replaced).
enum class UnclassedLeak : std::uint8_t { runtime, exec_replaced };

class BlockTracker {
 public:
  // A tracker's own record of each pool, kept inside the Engine's pool state
  // (BlockTrackerList::PoolData): the hooks of a pool's event get the record
  // of the pool the Engine already found for it, with no second lookup
  // (a tracker-side vector by slot cost ~1.5 % of `report` on tight-pairs).
  // A tracker with per-pool figures declares its own PoolData; the hooks
  // below take any record (auto&), so a tracker need not hide those it
  // does not use.
  struct PoolData {};
  // The same for each site, in the Engine's record of the site (the alloc
  // path has found it already).
  struct SiteData {};

  // A new pool's record, before any hook names the pool.
  void init_pool(auto& /*pool*/) {}
  // The Engine holds pool slots [0, count) from now on (before any hook
  // names one of them).
  void pools_grew(std::uint32_t /*count*/) {}
  // The Engine holds sites [0, count) from now on (before any hook names
  // one of them): a per-site tracker grows here, off the per-event path.
  void sites_grew(std::uint32_t /*count*/) {}
  // An allocation (alloc or reuse) counted in the range: not an inherited
  // block, of an analyzed pool; `site`: the Engine's index of its site.
  void on_alloc(auto& /*pool*/, auto& /*site_data*/, std::uint32_t /*pool_slot*/,
                std::uint32_t /*site*/, const Event& /*e*/) {}
  // An alloc or reuse of an analyzed pool entered the live set, counted in
  // the range or not (after on_alloc, and after the release of a block it
  // replaced); not one whose free was recorded before it.
  void on_live(const Event& /*e*/) {}
  // A block of an analyzed pool released.
  void on_release(auto& /*pool*/, const ReleasedBlock& /*r*/) {}
  // A free of an analyzed pool in the range, recorded before its alloc
  // (another thread's buffer reached the file first): its block never
  // entered the live set, and no on_release tells it.
  void on_late_free(auto& /*pool*/) {}
  // The range opened at `t`: each pool's state then (its first peak).
  void on_range_begin(auto& /*pool_data*/, std::uint64_t /*t*/, const PoolLive& /*pool*/) {}
  // The process-wide used bytes (the leaf pools') changed to `used` at `t`,
  // inside the range.
  void on_process_used(std::uint64_t /*t*/, std::uint64_t /*used*/) {}
  // A segment event (reserve or release) of an analyzed pool inside the
  // range, before the segments change.
  void on_segment(auto& /*pool*/, const Event& /*e*/) {}
  // The used bytes of an analyzed pool changed
  // at `t`, inside the range, after on_live or on_release of the block;
  // `pool` is its live state, read in place; `events`: the events of the
  // file processed so far.
  void on_pool_used(auto& /*pool_data*/, std::uint64_t /*t*/, const PoolLive& /*pool*/,
                    std::uint64_t /*events*/) {}
  // The same for its reserved bytes (a segment event).
  void on_pool_reserved(auto& /*pool_data*/, std::uint64_t /*t*/, const PoolLive& /*pool*/,
                        std::uint64_t /*events*/) {}
  // The range ended at `t`: each analyzed pool's state then (before
  // on_range_end).
  void on_pool_at_range_end(auto& /*pool_data*/, std::uint64_t /*t*/, const PoolLive& /*pool*/) {}
  // At the end (Engine::finish): a block allocated in the range and still
  // live, of class `cls` as the leaks count it (reachable included; the
  // runtime's blocks and those of an image replaced by exec are not told).
  void on_leak(std::uint32_t /*pool_slot*/, std::uint64_t /*address*/, const LiveBlock& /*b*/,
               LeakClass /*cls*/) {}
  // At the end: a block allocated in the range and still live, of none of
  // the classes on_leak tells.
  void on_unclassed_leak(std::uint32_t /*pool_slot*/, const LiveBlock& /*b*/,
                         UnclassedLeak /*why*/) {}
  // A block's bytes entered (delta > 0) or left the open entry `entry` (the
  // Engine's instance number) of scope `scope`, whose pool it is of;
  // `once`: the block's first entry of that scope (a scope nested in itself
  // counts a block once); `entries`: the scope's entries ended so far.
  void on_scope_bytes(std::uint32_t /*scope*/, std::uint32_t /*entry*/, bool /*once*/,
                      std::int64_t /*delta*/, std::uint32_t /*site*/, std::uint64_t /*entries*/) {}
  // Entry `entry` of `scope` ended inside the range, the scope's `entries`th.
  void on_scope_entry_end(std::uint32_t /*scope*/, std::uint32_t /*entry*/,
                          std::uint64_t /*entries*/, std::uint64_t /*time_ns*/) {}
  // The range ended: the state now is its end state.
  void on_range_end() {}
  // At the end (Engine::finish): `scope`'s ScopeStats is the next one moved
  // into Analysis::scopes.
  void on_scope_out(std::uint32_t /*scope*/) {}
  // At the end (Engine::finish): an analyzed pool's record goes into its
  // PoolStats, before the pool joins Analysis::pools.
  void on_pool_out(auto& /*pool*/, PoolStats& /*out*/) {}
  // At the end (Engine::finish): a site's record goes into its Site, before
  // the site joins Analysis::sites.
  void on_site_out(auto& /*site_data*/, Site& /*out*/) {}
  // After Engine::finish: the Analysis' pools and sites are out.
  void finish(Analysis& /*a*/) {}
};

}  // namespace memtrail::detail
