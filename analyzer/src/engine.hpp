// The Engine: the TraceVisitor that replays every event against the live
// state and accumulates the results of analysis.hpp. Run by the analysis
// pass (analysis_pass.hpp: analyze() and Session::open) and by replays that
// stop at a chosen moment (segment_map_at(), the Session's moments).
//
// What the Engine holds is the pass's live state, which every metric reads:
// the pools' live blocks and segments (PoolLive), used and reserved bytes,
// the sites' live bytes, the scopes' open instances, the range. A metric
// computed from it belongs in a tracker (trackers/): the per-block ones
// (sizes, lifetimes, large blocks, the used timeline, the temporaries, the
// scopes' growth, the pools' timelines and fragmentation, the sites' and
// pools' counters and the pools' peaks, the leak counts) are called inline
// from the alloc and free path through a compile-time list
// (trackers/block_trackers.hpp); the others hear the Engine's decisions off
// that path (engine_listener.hpp).
//
// What stays here is what decides the state, or is the state read at one
// instant: the process-wide peak (its time and position) with the peak
// epoch, because the peak decides which bytes each site holds at it
// (settle_peak: a site's live bytes before its first change after the
// peak); the orphan frees (a free recorded before its alloc makes that
// alloc drop the block) and their counts; which blocks are left live in
// the range and their leak class (told to the trackers); the state at the
// range's end (final used and reserved bytes, live blocks, the bytes live
// then per site and process-wide); the scopes' entries counted; the
// summary's event count, first and last times and duration, which the range
// itself decides; the unmatched, late and replaced frees' counts.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "chunked_store.hpp"
#include "decimator.hpp"
#include "engine_listener.hpp"
#include "flat_map.hpp"
#include "live_block.hpp"
#include "memtrail/analysis.hpp"
#include "memtrail/trace_file.hpp"
#include "pool_live.hpp"
#include "session_taps.hpp"
#include "trackers/block_trackers.hpp"

namespace memtrail::detail {

struct PoolCheckpoint;  // checkpoints.hpp
class SiteChartTap;     // site_chart_tap.hpp

// One cache line a site, all of it what the pass reads or changes: with
// 10^6 sites every site change misses the cache (distinct-stacks-1e6), and
// the 184-byte record with live at its end made that two or three misses.
// The public Site (Analysis::sites: frames, the leak tracker's tallies, the
// live bytes at the range's end) is built from it at finish: held here for
// the whole pass it made the record 256 bytes, the largest item of the GUI's
// peak on 10^5 stacks (24 MiB of ~57). The site's counters are the counters
// tracker's (trackers/counters.hpp), in `trackers`.
struct alignas(64) SiteState {
  std::uint64_t live = 0;  // bytes live now
  std::uint64_t peak_epoch = 0;
  BlockTrackers::SiteData trackers;  // the block trackers' records of the site
  std::uint64_t peak_bytes = 0;      // its live bytes at the latest peak (settle_peak)
  StackId stack{};
  PoolId pool{};
};
static_assert(sizeof(SiteState) == 64, "a site's state is one cache line");

// The live state (PoolLive) and what the Engine reports of it.
struct PoolState : PoolLive {
  PoolStats out;
  bool known = false;    // seen in the pool table
  bool included = true;  // passes AnalysisOptions::pools
  // Upstream of an analyzed pool: its blocks are the segments of the pools
  // above it, so they stay out of every process-wide figure (peak, counters,
  // histograms, leaks, top sites); its own PoolStats still show them.
  bool is_upstream = false;
  std::vector<std::uint32_t> site_by_stack;  // stack id -> site index + 1
  // The block trackers' records of this pool (BlockTracker::PoolData): the
  // alloc and free path hands them over with the pool it has found.
  BlockTrackers::PoolData trackers;
};

// A scope's record and its entries counted; its growth and per-entry
// figures are the ScopeGrowthTracker's (trackers/scopes.hpp).
struct ScopeState {
  ScopeStats out;
};

struct ScopeInstance {
  std::uint32_t scope = 0;
  std::uint32_t parent = 0;  // enclosing instance on the same thread
};

struct ThreadState {
  std::uint32_t scope_top = 0;  // innermost open scope instance
};

struct OrphanFree {
  std::uint64_t time_ns = 0;
  std::uint32_t thread = 0;
};

class Engine : public TraceVisitor {
 public:
  Engine(const AnalysisOptions& options, const ProgressFn& progress);

  // Pool ids from a trace that may be hostile: past this, pools share one
  // overflow slot (the last) instead of growing a vector to gigabytes.
  static constexpr std::uint32_t kMaxPools = 1u << 14;
  static std::uint32_t pool_slot(std::uint32_t id) { return std::min(id, kMaxPools - 1); }
  // The same for scope ids (ScopeInfo::id, a scope event's aux).
  static constexpr std::uint32_t kMaxScopes = 1u << 16;
  static std::uint32_t scope_slot(std::uint64_t id) {
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(id, kMaxScopes - 1));
  }

  // Stop reading after the first event later than this (segment_map_at).
  void stop_after(std::uint64_t time_ns) { stop_after_ns_ = time_ns; }
  // Stop reading once this many events of the file have been processed.
  void stop_after_events(std::uint64_t n) { stop_after_events_ = n; }
  // Events of the file processed so far (a position: the state after them),
  // and the time of the last one.
  std::uint64_t events_processed() const { return event_index_; }
  std::uint64_t last_time_ns() const { return last_time_ns_; }
  // Replays for a moment need the state, not the fragmentation series.
  void set_sample_fragmentation(bool on) {
    block_trackers_.get<PoolTimelinesTracker>().set_sample_fragmentation(on);
  }
  // A replay for a segment map needs no stack nodes (blocks keep their stack
  // id): skipping them keeps a replay's memory off the number of stacks.
  void skip_stack_nodes() { skip_stack_nodes_ = true; }
  // A session's recorder of series, scopes and ooms (null: none).
  void set_taps(SessionTaps* taps) { taps_ = taps; }
  // The site charts' recorder (site_chart_tap.hpp; null: none).
  void set_site_tap(SiteChartTap* tap) { site_tap_ = tap; }
  // A tracker's ear on the read (engine_listener.hpp): every pool and scope
  // record, and the events of `kinds`. Only kinds off the per-block path
  // can be listened to (not alloc, reuse, free, segment_*, scope_*): a
  // block's event pays for no listener.
  void listen(EngineListener& l, std::initializer_list<EventKind> kinds);
  // Every event from now on, of any kind: one call per event (the workspaces
  // tracker, once the trace has a workspace pool).
  void listen_to_every_event(EngineListener& l);
  // The text of string record `id` read so far ("" if none).
  std::string string_of(std::uint64_t id) const;
  // The live state of every analyzed pool (engine_checkpoint.cpp); false,
  // with `out` cleared, once it passes max_bytes.
  bool checkpoint(std::vector<PoolCheckpoint>& out, std::size_t max_bytes);
  // Starts from a checkpoint instead of an empty state, after on_pool() of
  // the pools; then read the file from the checkpoint's chunk.
  // `last_time_ns` is the time of the last event before the checkpoint: a
  // replay that stops at once (the wanted position is the checkpoint's own)
  // still knows its moment (the heap sample it reads is the one before it).
  void restore(const std::vector<PoolCheckpoint>& pools, std::uint64_t events_before,
               std::uint64_t last_time_ns);

  void on_header(const TraceHeader& h) override { header_ = h; }
  void on_string(std::uint32_t id, std::string_view text) override;
  void on_module(const ModuleInfo& m) override;
  void on_thread(const ThreadInfo& t) override;
  void on_pool(const PoolInfo& p) override;
  void on_stack_node(const StackNode& n) override;
  void on_scope(const ScopeInfo& s) override;
  void on_event(const Event& e) override;
  void on_events(const Event* events, std::size_t n) override;
  bool keep_going() override { return !cancelled_ && !stopped_; }

  bool cancelled() const { return cancelled_; }

  // Completes the pass (leaks, range-end snapshot) and moves the results out.
  // The block trackers' figures are not among them: block_trackers().finish()
  // puts them in `out` after this (the analysis pass does).
  void finish(Analysis& out);
  // The per-block metrics (trackers/block_trackers.hpp).
  BlockTrackers& block_trackers() { return block_trackers_; }

  // Live state of one pool now (segment_map_at). `merge_mapped`: adjacent
  // `map` segments (one expandable reservation) come as one SegmentInfo, as
  // compute_fragmentation() counts them.
  SegmentMap segment_map(std::uint32_t pool, bool merge_mapped = false);

 private:
  PoolState& pool_state(std::uint32_t id) { return id < pool_count_ ? pools_[id] : grow_pools(id); }
  ThreadState& thread_state(std::uint32_t id) {
    return id < thread_count_ ? thread_states_[id] : grow_threads(id);
  }
  PoolState& grow_pools(std::uint32_t id);
  // The slot of pool `id` (pool_state(id) is pools_[slot]), grown if new:
  // the alloc and free path hands it to the block trackers for the price of
  // pool_state's own compare.
  std::uint32_t grown_pool_slot(std::uint32_t id) {
    if (id < pool_count_) return id;
    grow_pools(id);
    return pool_slot(id);
  }
  void grow_scopes(std::uint32_t id);
  ThreadState& grow_threads(std::uint32_t id);
  // Site of (pool, stack): one vector load when the site exists.
  std::uint32_t site_index(PoolState& pool, std::uint32_t pool_id, std::uint32_t stack) {
    if (stack < pool.site_by_stack.size() && pool.site_by_stack[stack] != 0)
      return pool.site_by_stack[stack] - 1;
    return new_site_index(pool, pool_id, stack);
  }
  std::uint32_t new_site_index(PoolState& pool, std::uint32_t pool_id, std::uint32_t stack);
  // True if `e` is inside the range. Inline for the common case (inside,
  // no end in sight); the transitions are out of line.
  bool update_range(const Event& e) {
    if (range_ == RangeState::inside && e.time_ns <= options_.to_ns &&
        (e.kind != EventKind::mark || options_.to_mark.empty()))
      return true;
    return update_range_slow(e);
  }
  bool update_range_slow(const Event& e);
  void end_range();
  void settle_peak(SiteState& s) {
    // A site's live bytes at the latest peak are what it held just before its
    // first change after that peak (or now, if it has not changed since).
    if (s.peak_epoch != peak_epoch_) {
      s.peak_bytes = s.live;
      s.peak_epoch = peak_epoch_;
    }
  }
  void add_used(PoolState& p, std::uint32_t pool_id, std::int64_t delta, std::uint64_t t);
  void process(const Event& e);         // on_event's body, inline in on_events' loop
  void prefetch(const Event& e) const;  // the state process(e) will touch
  // The site process(e) will touch, once prefetch(e) has loaded the entry
  // that names it (the live block of a free, the site table's of an alloc).
  void prefetch_site(const Event& e);
  void on_alloc(const Event& e, bool in_range);
  void on_free(const Event& e, bool in_range);
  // Accounts for a block already removed from (or being replaced in) the live set.
  // `slot`: pool_id's (grown_pool_slot).
  void release_block(PoolState& p, std::uint32_t pool_id, std::uint32_t slot, std::uint64_t address,
                     const LiveBlock& b, const Event& e, bool in_range);
  void on_segment(const Event& e, bool in_range);
  void on_scope_begin(const Event& e);
  void on_scope_end(const Event& e, bool in_range);
  void scope_walk(std::uint32_t inst, std::uint32_t pool, std::int64_t delta, std::uint32_t site);
  // Closes scope instance `inst` of thread `t` (and any left open inside it).
  void end_scope_instance(ThreadState& t, std::uint32_t inst, const Event& e, bool in_range);
  // An AnalysisOptions::iteration_mark: ends this thread's iteration entry
  // and begins the next.
  void on_iteration_mark(const Event& e, bool in_range);
  // A mark that may bound an iteration (iteration_mark's text, or the
  // first memtrail_iteration_begin's when iterations come from marks).
  void on_mark_of_iteration(const Event& e, bool in_range);
  // Scope ids index scopes_, but for the iteration scope of marks.
  static constexpr std::uint32_t kIterationScope = kIterationScopeId;
  ScopeState& scope_at(std::uint32_t id) {
    return id == kIterationScope ? iteration_scope_ : scopes_[id];
  }
  // finish()'s steps, in its order.
  void close_range(Analysis& a);
  void tell_leaks();
  void tap_live_blocks();
  void settle_duration();
  void move_summary_and_sites(Analysis& a);
  void move_pools(Analysis& a);
  void move_scopes(Analysis& a);
  void move_tables(Analysis& a);
  // The listeners of e's kind / of every event.
  void tell(const Event& e, bool in_range);
  void tell_every(const Event& e, bool in_range);

  AnalysisOptions options_;
  ProgressFn progress_;
  TraceHeader header_;
  std::unordered_map<std::uint32_t, std::string> strings_;  // few: marks, oom states
  std::vector<ModuleInfo> modules_;
  std::vector<ThreadInfo> threads_;
  std::vector<StackNode> stack_nodes_;
  std::vector<PoolState> pools_;             // index = pool id
  std::vector<ScopeState> scopes_;           // index = scope id
  ScopeState iteration_scope_;               // of AnalysisOptions::iteration_mark
  std::uint64_t iteration_mark_string_ = 0;  // its string id, 0 = not seen
  std::string iteration_name_;               // its text
  std::vector<ThreadState> thread_states_;
  // The sizes of pools_ and thread_states_, kept apart: size() of a vector
  // of large records is a subtraction and a multiplication on every event.
  std::uint32_t pool_count_ = 0, thread_count_ = 0;
  std::vector<ScopeInstance> scope_instances_{1};
  // In chunks: 10^5 sites grow without a doubled copy of them all (a
  // vector's growth was the session's largest peak at 10^5 stacks), and
  // an index costs no deque map lookup (chunked_store.hpp).
  ChunkedStore<SiteState> sites_;
  // The bytes live at the range's end per site (Site::live_at_range_end),
  // by site index; sized at the range's end, and only if a block is live.
  std::vector<Tally> live_at_range_end_;
  // (pool, huge stack id) -> site + 1; open addressing: 10^6 distinct stacks
  // past kDenseSiteStacks made std::unordered_map's node per site 15 % of
  // `report` on distinct-stacks-1e6.
  AddressMap<std::uint32_t> sparse_sites_;
  std::unordered_map<std::uint64_t, OrphanFree> orphans_;  // key: pool << 48 ^ address

  // Range state machine: before -> inside -> after.
  enum class RangeState { before, inside, after } range_ = RangeState::before;
  std::uint64_t range_from_ = 0, range_to_ = kTimeMax;
  bool from_mark_seen_ = false, to_mark_seen_ = false;

  Summary summary_;
  Leaks leaks_;  // whether the trace was classified or exec'd (the counts: LeakCountsTracker)
  std::uint64_t total_used_ = 0;  // process-wide used (non-upstream pools)
  std::uint64_t peak_epoch_ = 0;
  bool any_event_in_range_ = false;
  // The per-block metrics (trackers/block_trackers.hpp), told of every
  // block from the hot path by inline calls.
  BlockTrackers block_trackers_;
  std::uint64_t events_seen_ = 0;
  std::uint64_t stop_after_ns_ = kTimeMax;
  std::uint64_t stop_after_events_ = ~std::uint64_t{0};
  std::uint64_t event_index_ = 0;  // events of the file processed
  std::uint64_t last_time_ns_ = 0;
  bool skip_stack_nodes_ = false;
  SessionTaps* taps_ = nullptr;
  SiteChartTap* site_tap_ = nullptr;
  // The listeners (listen()): of the tables, by event kind, of every event.
  std::vector<EngineListener*> listeners_;
  std::array<std::vector<EngineListener*>, kEventKindCount> listeners_of_kind_;
  std::vector<EngineListener*> every_event_listeners_;
  bool stopped_ = false;
  bool cancelled_ = false;
  bool range_ended_ = false;
};

// Maps reader status onto Analysis::error / warning (analyze.cpp).
void apply_read_status(Analysis& a, const TraceReader& reader, const ReadResult& r,
                       bool allow_partial);

}  // namespace memtrail::detail
