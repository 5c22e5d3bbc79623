#include "engine.hpp"

#include <algorithm>
#include <cassert>

#include "site_chart_tap.hpp"

namespace memtrail::detail {

// The per-event path (on_event -> on_alloc/on_free -> release_block ->
// add_used) is folded into on_event: as separate calls, saving and
// restoring registers cost ~50 instructions per event (cachegrind).
#define MEMTRAIL_EVENT_INLINE [[gnu::always_inline]] inline

namespace {

// Ids come from a trace that may be hostile: past these, state is shared in
// one overflow slot instead of growing a vector to gigabytes (threads:
// kMaxThreads, trackers/block_tracker.hpp).
constexpr std::uint32_t kMaxStackIndex = 1u << 24;    // stack_nodes_ (dense recorder ids)
constexpr std::uint32_t kDenseSiteStacks = 1u << 20;  // per-pool site lookup by vector
constexpr std::size_t kMaxOrphans = 1u << 16;

// The sparse site table's key of (pool, stack >= kDenseSiteStacks): never 0.
std::uint64_t sparse_site_key(std::uint32_t pool, std::uint32_t stack) {
  return (static_cast<std::uint64_t>(pool) << 32) | stack;
}

std::uint64_t orphan_key(std::uint32_t pool, std::uint64_t address) {
  return (static_cast<std::uint64_t>(pool) << 48) ^ address;
}

}  // namespace

Engine::Engine(const AnalysisOptions& options, const ProgressFn& progress)
    : options_(options), progress_(progress), block_trackers_(options) {}

namespace {

// The kinds process() tells listeners of: none on the per-block path.
bool listenable(EventKind k) {
  switch (k) {
    case EventKind::alloc:
    case EventKind::reuse:
    case EventKind::free:
    case EventKind::segment_reserve:
    case EventKind::segment_release:
    case EventKind::scope_begin:
    case EventKind::scope_end:
      return false;
    default:
      return static_cast<int>(k) < kEventKindCount;
  }
}

}  // namespace

void Engine::listen(EngineListener& l, std::initializer_list<EventKind> kinds) {
  listeners_.push_back(&l);
  for (EventKind k : kinds) {
    assert(listenable(k) && "a block's events go to no listener");
    if (listenable(k)) listeners_of_kind_[static_cast<std::size_t>(k)].push_back(&l);
  }
}

void Engine::listen_to_every_event(EngineListener& l) {
  every_event_listeners_.push_back(&l);
}

void Engine::tell(const Event& e, bool in_range) {
  if (static_cast<std::size_t>(e.kind) >= listeners_of_kind_.size()) return;
  for (EngineListener* l : listeners_of_kind_[static_cast<std::size_t>(e.kind)])
    l->on_event(e, in_range);
}

void Engine::tell_every(const Event& e, bool in_range) {
  for (EngineListener* l : every_event_listeners_) l->on_event(e, in_range);
}

std::string Engine::string_of(std::uint64_t id) const {
  auto it = strings_.find(static_cast<std::uint32_t>(id));
  return it != strings_.end() && id <= 0xFFFFFFFFu ? it->second : std::string();
}

void Engine::on_string(std::uint32_t id, std::string_view text) {
  strings_[id] = std::string(text);
  if (!options_.iteration_mark.empty() && text == options_.iteration_mark) {
    iteration_mark_string_ = id;
    iteration_name_ = options_.iteration_mark;
  }
}

void Engine::on_module(const ModuleInfo& m) {
  for (auto& existing : modules_)
    if (existing.id == m.id) {
      existing = m;
      return;
    }
  modules_.push_back(m);
}

void Engine::on_thread(const ThreadInfo& t) {
  if (t.id >= kMaxThreads) return;
  if (t.id >= threads_.size()) threads_.resize(t.id + 1);
  threads_[t.id] = t;
}

void Engine::on_stack_node(const StackNode& n) {
  if (n.id >= kMaxStackIndex || skip_stack_nodes_) return;
  if (n.id >= stack_nodes_.size())
    stack_nodes_.resize(std::max<std::size_t>(n.id + 1, 2 * stack_nodes_.size()));
  stack_nodes_[n.id] = n;
}

void Engine::on_pool(const PoolInfo& info) {
  PoolState& p = pool_state(info.id);
  p.known = true;
  p.out.info = info;
  p.out.info.id = std::min(info.id, kMaxPools - 1);
  p.included = options_.pools.empty() || std::find(options_.pools.begin(), options_.pools.end(),
                                                   info.name) != options_.pools.end();
  for (EngineListener* l : listeners_) l->on_pool(p.out.info, p.included);
  // Only an analyzed pool makes its parent an upstream: with --pool naming the
  // upstream alone, its blocks are the process-wide figures.
  if (p.included && info.parent != 0 && info.parent != info.id) {
    PoolState& up = pool_state(info.parent);
    if (!up.is_upstream) {
      up.is_upstream = true;
      // From now on its bytes are counted through the pools above it.
      total_used_ -= up.used;
    }
  }
}

void Engine::on_scope(const ScopeInfo& s) {
  std::uint32_t id = std::min(s.id, kMaxScopes - 1);
  grow_scopes(id);
  scopes_[id].out.info = s;
  for (EngineListener* l : listeners_) l->on_scope(s);
}

void Engine::grow_scopes(std::uint32_t id) {
  if (id >= scopes_.size()) scopes_.resize(id + 1);
}

PoolState& Engine::grow_pools(std::uint32_t id) {
  id = std::min(id, kMaxPools - 1);
  if (id >= pools_.size()) {
    std::size_t old = pools_.size();
    pools_.resize(id + 1);
    pool_count_ = static_cast<std::uint32_t>(pools_.size());
    block_trackers_.pools_grew(pool_count_);
    for (std::size_t i = old; i < pools_.size(); ++i) {
      PoolState& p = pools_[i];
      p.out.info.id = static_cast<std::uint32_t>(i);
      block_trackers_.init_pool(p.trackers);
      p.out.info.name = i == 0 ? "(none)" : "pool#" + std::to_string(i);
      p.included = options_.pools.empty() || std::find(options_.pools.begin(), options_.pools.end(),
                                                       p.out.info.name) != options_.pools.end();
    }
  }
  return pools_[id];
}

ThreadState& Engine::grow_threads(std::uint32_t id) {
  id = std::min(id, kMaxThreads - 1);
  if (id >= thread_states_.size()) {
    thread_states_.resize(id + 1);
    thread_count_ = static_cast<std::uint32_t>(thread_states_.size());
  }
  return thread_states_[id];
}

std::uint32_t Engine::new_site_index(PoolState& pool, std::uint32_t pool_id, std::uint32_t stack) {
  std::uint32_t* idx;
  if (stack < kDenseSiteStacks) {
    if (stack >= pool.site_by_stack.size())
      pool.site_by_stack.resize(std::max<std::size_t>(stack + 1, 2 * pool.site_by_stack.size()), 0);
    idx = &pool.site_by_stack[stack];
  } else {
    // Never key 0: stack >= kDenseSiteStacks.
    idx = sparse_sites_.try_emplace(sparse_site_key(pool_id, stack)).first;
  }
  if (*idx == 0) {
    SiteState& fresh = sites_.emplace_back();
    fresh.stack = StackId{stack};
    fresh.pool = PoolId{pool_id};
    fresh.peak_epoch = peak_epoch_;
    *idx = static_cast<std::uint32_t>(sites_.size());
    block_trackers_.sites_grew(*idx);
  }
  return *idx - 1;
}

// ------------------------------------------------------------ range

bool Engine::update_range_slow(const Event& e) {
  if (range_ == RangeState::after) return false;
  // A user's mark; the recorder's "ended by signal" mark never bounds a range.
  bool is_mark =
      e.kind == EventKind::mark && e.detail != static_cast<std::uint8_t>(MarkDetail::signal);
  if (range_ == RangeState::before) {
    bool start = false;
    if (!options_.from_mark.empty()) {
      start = is_mark && string_of(e.aux) == options_.from_mark;
      if (start) from_mark_seen_ = true;
    } else {
      start = e.time_ns >= options_.from_ns;
    }
    if (!start) return false;
    range_ = RangeState::inside;
    range_from_ = options_.from_mark.empty() ? options_.from_ns : e.time_ns;
    // An event past `to` that opens the range leaves it empty: the range is
    // the state replayed so far, and that event is not the range's.
    const bool empty = e.time_ns > options_.to_ns;
    const std::uint64_t opened = empty ? range_from_ : e.time_ns;
    // The range opens with the state replayed so far: that is its first peak.
    summary_.peak_used_bytes = total_used_;
    summary_.peak_time_ns = opened;
    summary_.peak_position = event_index_ - 1;  // before this event
    ++peak_epoch_;
    for (std::uint32_t slot = 0; slot < pool_count_; ++slot)
      block_trackers_.on_range_begin(pools_[slot].trackers, opened, pools_[slot]);
    if (!empty) return true;
    range_to_ = options_.to_ns;
    end_range();
    return false;
  }
  if (e.time_ns > options_.to_ns) {
    range_to_ = options_.to_ns;
    end_range();
    return false;
  }
  if (is_mark && !options_.to_mark.empty() && string_of(e.aux) == options_.to_mark) {
    to_mark_seen_ = true;
    range_to_ = e.time_ns;
    end_range();
    return false;
  }
  return true;
}

void Engine::end_range() {
  if (range_ended_) return;
  range_ended_ = true;
  range_ = RangeState::after;
  for (std::uint32_t slot = 0; slot < pool_count_; ++slot) {
    PoolState& p = pools_[slot];
    p.out.final_used_bytes = p.used;
    p.out.final_reserved_bytes = p.reserved;
    p.out.live_blocks = p.live.size();
    if (!p.included) continue;
    p.live.for_each([&](std::uint64_t, LiveBlock& b) {
      if (!b.in_range) return;
      if (b.site >= live_at_range_end_.size()) live_at_range_end_.resize(sites_.size());
      live_at_range_end_[b.site].add(b.size);
      if (p.is_upstream) return;
      summary_.live_at_range_end.add(b.size);
    });
    block_trackers_.on_pool_at_range_end(p.trackers, summary_.last_event_ns, p);
  }
  summary_.final_used_bytes = total_used_;
  block_trackers_.on_range_end();
}

// ------------------------------------------------------------ state changes

MEMTRAIL_EVENT_INLINE void Engine::add_used(PoolState& p, std::uint32_t pool_id, std::int64_t delta,
                                            std::uint64_t t) {
  p.used += static_cast<std::uint64_t>(delta);
  if (!p.is_upstream) total_used_ += static_cast<std::uint64_t>(delta);
  if (taps_) {  // the session's series cover the whole trace, whatever the range
    taps_->pool_used(pool_id, t, p.used);
    if (!p.is_upstream) taps_->process_used(pool_id, t, total_used_);
  }
  if (range_ != RangeState::inside) return;
  if (!p.is_upstream) {
    if (total_used_ > summary_.peak_used_bytes) {
      summary_.peak_used_bytes = total_used_;
      summary_.peak_time_ns = t;
      summary_.peak_position = event_index_;
      ++peak_epoch_;
    }
    block_trackers_.on_process_used(t, total_used_);
  }
  block_trackers_.on_pool_used(p.trackers, t, p, event_index_);
}

void Engine::scope_walk(std::uint32_t inst, std::uint32_t pool, std::int64_t delta,
                        std::uint32_t site) {
  std::uint32_t seen[16];
  int n_seen = 0;
  for (std::uint32_t i = inst; i != 0; i = scope_instances_[i].parent) {
    const ScopeInstance& si = scope_instances_[i];
    const ScopeState& sc = scope_at(si.scope);
    if (sc.out.info.pool != 0 && sc.out.info.pool != pool) continue;
    // A scope nested in itself (recursion) counts a block once.
    bool dup = false;
    for (int k = 0; k < n_seen; ++k) dup |= seen[k] == si.scope;
    if (!dup && n_seen < 16) seen[n_seen++] = si.scope;
    block_trackers_.on_scope_bytes(si.scope, i, !dup, delta, site, sc.out.entries);
  }
}

// ------------------------------------------------------------ events

void Engine::on_event(const Event& e) {
  on_events(&e, 1);  // one copy of the inlined per-event path
}

void Engine::on_events(const Event* events, std::size_t n) {
  // The live-block slot of an alloc or free (and its site's entry) misses the
  // cache once the live set outgrows it: about half of the pass on
  // fifo-new-delete. Those of the event kAhead further on are loaded while
  // this one is processed; with 10^6 sites the site record misses too
  // (distinct-stacks-1e6), so kSiteAhead events on, once its entry is
  // loaded, the site is.
  constexpr std::size_t kAhead = 8, kSiteAhead = 4;
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) prefetch(events[i + kAhead]);
    if (i + kSiteAhead < n) prefetch_site(events[i + kSiteAhead]);
    process(events[i]);
  }
}

MEMTRAIL_EVENT_INLINE void Engine::prefetch(const Event& e) const {
  bool block =
      e.kind == EventKind::alloc || e.kind == EventKind::reuse || e.kind == EventKind::free;
  if (!block || e.pool >= pool_count_) return;
  const PoolState& p = pools_[e.pool];
  p.live.prefetch(e.address);
  if (e.kind == EventKind::free) return;
  if (e.stack < p.site_by_stack.size())
    __builtin_prefetch(&p.site_by_stack[e.stack]);
  else if (e.stack >= kDenseSiteStacks)
    sparse_sites_.prefetch(sparse_site_key(e.pool, e.stack));
}

MEMTRAIL_EVENT_INLINE void Engine::prefetch_site(const Event& e) {
  // Up to ~1.5 MB of sites stay in L2: looking up the site early would only
  // add a lookup per event (tight-pairs' one site: 3 % of its report).
  constexpr std::size_t kCachedSites = 8192;
  if (sites_.size() < kCachedSites || e.pool >= pool_count_) return;
  PoolState& p = pools_[e.pool];
  std::uint32_t site_plus_1 = 0;
  if (e.kind == EventKind::free) {
    if (const LiveBlock* b = p.live.find(e.address)) site_plus_1 = b->site + 1;
  } else if (e.kind == EventKind::alloc || e.kind == EventKind::reuse) {
    if (e.stack < p.site_by_stack.size())
      site_plus_1 = p.site_by_stack[e.stack];
    else if (e.stack >= kDenseSiteStacks)
      if (const std::uint32_t* idx = sparse_sites_.find(sparse_site_key(e.pool, e.stack)))
        site_plus_1 = *idx;
  }
  if (site_plus_1 == 0) return;
  // The fields an event changes: the first cache line (SiteState).
  __builtin_prefetch(&sites_[site_plus_1 - 1]);
}

MEMTRAIL_EVENT_INLINE void Engine::process(const Event& e) {
  if (e.time_ns > stop_after_ns_ || event_index_ >= stop_after_events_) {
    stopped_ = true;
    return;
  }
  ++event_index_;
  last_time_ns_ = e.time_ns;
  if (progress_ && (++events_seen_ & 0xFFFFF) == 0 && !progress_(events_seen_)) cancelled_ = true;
  bool in_range = update_range(e);
  if (in_range) {
    if (!any_event_in_range_) summary_.first_event_ns = e.time_ns;
    any_event_in_range_ = true;
    ++summary_.events;
    summary_.first_event_ns = std::min(summary_.first_event_ns, e.time_ns);
    summary_.last_event_ns = std::max(summary_.last_event_ns, e.time_ns);
  }
  if (!every_event_listeners_.empty()) [[unlikely]]
    tell_every(e, in_range);
  switch (e.kind) {
    case EventKind::alloc:
    case EventKind::reuse:
      on_alloc(e, in_range);
      break;
    case EventKind::free:
      on_free(e, in_range);
      break;
    case EventKind::segment_reserve:
    case EventKind::segment_release:
      on_segment(e, in_range);
      break;
    case EventKind::scope_begin:
      on_scope_begin(e);
      break;
    case EventKind::scope_end:
      on_scope_end(e, in_range);
      break;
    case EventKind::workspace_reset:
    case EventKind::spill:  // per scope: trackers/scope_spills.cpp
      tell(e, in_range);
      break;
    case EventKind::oom:
      tell(e, in_range);
      if (taps_) taps_->oom(e, string_of(e.aux));
      break;
    case EventKind::sample:
      tell(e, in_range);
      if (taps_) taps_->sample(e);
      break;
    case EventKind::mark:
      // The marks and the run's end are trackers' (trackers/marks.cpp,
      // run_end.cpp); a loss or the ending signal bounds no iteration.
      tell(e, in_range);
      if (e.detail == static_cast<std::uint8_t>(MarkDetail::exec)) leaks_.ended_at_exec = true;
      if (e.detail != static_cast<std::uint8_t>(MarkDetail::lost) &&
          e.detail != static_cast<std::uint8_t>(MarkDetail::signal))
        on_mark_of_iteration(e, in_range);
      break;
    case EventKind::reachability: {
      tell(e, in_range);
      PoolState& p = pool_state(e.pool);
      leaks_.classified = true;
      if (LiveBlock* b = p.live.find(e.address)) b->leak_class = e.detail;
      break;
    }
    default:
      tell(e, in_range);
      break;
  }
}

MEMTRAIL_EVENT_INLINE void Engine::on_alloc(const Event& e, bool in_range) {
  const std::uint32_t pool_at = grown_pool_slot(e.pool);
  PoolState& p = pools_[pool_at];
  if (!p.included) return;
  p.has_blocks = true;
  std::uint32_t site = site_index(p, e.pool, e.stack);
  SiteState& s = sites_[site];
  // An inherited block is live here but was allocated in another trace.
  if (in_range && e.detail != static_cast<std::uint8_t>(AllocFn::inherited)) {
    block_trackers_.on_alloc(p.trackers, s.trackers, pool_at, site, e);
    if (site_tap_) site_tap_->counted(site, e.pool, e.stack, e.time_ns);
  }
  if (!orphans_.empty()) {
    auto it = orphans_.find(orphan_key(e.pool, e.address));
    if (it != orphans_.end()) {
      bool race = it->second.time_ns >= e.time_ns;
      orphans_.erase(it);
      if (race) {
        // The free was recorded before this alloc (cross-thread, the freeing
        // thread's buffer reached the file first): the block is already gone.
        ++summary_.late_matched_frees;
        if (in_range) block_trackers_.on_late_free(p.trackers);
        return;
      }
      ++summary_.unmatched_frees;
    }
  }
  auto [slot, fresh] = p.live.try_emplace(e.address);
  if (!fresh) {
    // Allocated again without a free in between: the free was lost.
    ++summary_.replaced_blocks;
    LiveBlock old = *slot;
    Event as_free = e;
    as_free.kind = EventKind::free;
    release_block(p, e.pool, pool_at, e.address, old, as_free, false);
  }
  LiveBlock& b = *slot;
  b = LiveBlock{};
  b.size = e.size;
  b.time_ns = e.time_ns;
  b.site = site;
  b.thread = e.thread;
  b.in_range = in_range;
  if (const std::uint32_t scope_top = thread_state(e.thread).scope_top; scope_top != 0) {
    b.scope_inst = scope_top;
    scope_walk(scope_top, e.pool, static_cast<std::int64_t>(e.size), site);
  }
  block_trackers_.on_live(e);
  settle_peak(s);
  s.live += e.size;
  add_used(p, e.pool, static_cast<std::int64_t>(e.size), e.time_ns);
  if (site_tap_) site_tap_->added(site, e.pool, e.stack, e.time_ns, e.size);
}

MEMTRAIL_EVENT_INLINE void Engine::on_free(const Event& e, bool in_range) {
  const std::uint32_t pool_at = grown_pool_slot(e.pool);
  PoolState& p = pools_[pool_at];
  if (!p.included) return;
  LiveBlock b;
  if (!p.live.take(e.address, b)) {
    if (orphans_.size() < kMaxOrphans)
      orphans_.emplace(orphan_key(e.pool, e.address), OrphanFree{e.time_ns, e.thread});
    else
      ++summary_.unmatched_frees;
    return;
  }
  release_block(p, e.pool, pool_at, e.address, b, e, in_range);
}

MEMTRAIL_EVENT_INLINE void Engine::release_block(PoolState& p, std::uint32_t pool_id,
                                                 std::uint32_t slot, std::uint64_t address,
                                                 const LiveBlock& b, const Event& e,
                                                 bool in_range) {
  SiteState& s = sites_[b.site];
  settle_peak(s);
  s.live -= b.size;
  if (b.scope_inst != 0)
    scope_walk(b.scope_inst, pool_id, -static_cast<std::int64_t>(b.size), b.site);
  if (site_tap_) [[unlikely]] {
    // The site charts' Temporary cost: whether the temporaries tracker
    // counted this release.
    const TemporariesTracker& temporaries = block_trackers_.get<TemporariesTracker>();
    const std::uint64_t before = temporaries.at_site(b.site);
    block_trackers_.on_release(
        p.trackers, ReleasedBlock{pool_id, slot, address, b, e.time_ns, e.thread, in_range});
    site_tap_->released(b.site, e.time_ns, b.size, temporaries.at_site(b.site) != before);
  } else {
    block_trackers_.on_release(
        p.trackers, ReleasedBlock{pool_id, slot, address, b, e.time_ns, e.thread, in_range});
  }
  if (taps_)
    taps_->block(BlockLifetime{PoolId{pool_id}, SiteId{b.site}, address, b.size, b.time_ns,
                               e.time_ns, b.thread},
                 e.time_ns);
  add_used(p, pool_id, -static_cast<std::int64_t>(b.size), e.time_ns);
}

void Engine::on_segment(const Event& e, bool in_range) {
  const std::uint32_t slot = grown_pool_slot(e.pool);
  PoolState& p = pools_[slot];
  if (!p.included) return;
  p.has_segments = true;
  if (in_range) block_trackers_.on_segment(p.trackers, e);
  if (e.kind == EventKind::segment_reserve) {
    auto [it, fresh] = p.segments.try_emplace(e.address);
    if (!fresh) p.reserved -= it->second.size;
    it->second = SegmentRec{e.size, static_cast<SegmentDetail>(e.detail)};
    p.reserved += e.size;
  } else {
    // Remove [address, address + size) from the segments: munmap may cut a
    // mapping in two, and size 0 means "the segment at this address".
    std::uint64_t lo = e.address;
    std::uint64_t hi = e.size ? e.address + e.size : 0;
    if (e.size == 0) {
      auto it = p.segments.find(lo);
      if (it != p.segments.end()) hi = lo + it->second.size;
    }
    if (hi > lo) {
      auto it = p.segments.upper_bound(lo);
      if (it != p.segments.begin()) --it;
      while (it != p.segments.end() && it->first < hi) {
        std::uint64_t s = it->first, end = s + it->second.size;
        SegmentDetail detail = it->second.detail;
        if (end <= lo) {
          ++it;
          continue;
        }
        std::uint64_t cut_lo = std::max(s, lo), cut_hi = std::min(end, hi);
        p.reserved -= cut_hi - cut_lo;
        it = p.segments.erase(it);
        if (s < cut_lo) p.segments.emplace(s, SegmentRec{cut_lo - s, detail});
        if (cut_hi < end) it = p.segments.emplace(cut_hi, SegmentRec{end - cut_hi, detail}).first;
      }
    }
  }
  if (taps_) taps_->pool_reserved(p.out.info.id, e.time_ns, p.reserved);
  if (range_ == RangeState::inside) {
    block_trackers_.on_pool_reserved(p.trackers, e.time_ns, p, event_index_);
  }
}

void Engine::on_scope_begin(const Event& e) {
  std::uint32_t id = static_cast<std::uint32_t>(std::min<std::uint64_t>(e.aux, kMaxScopes - 1));
  grow_scopes(id);
  if (scopes_[id].out.info.name.empty()) {
    scopes_[id].out.info.id = id;
    scopes_[id].out.info.name = "scope#" + std::to_string(id);
  }
  if (taps_) taps_->scope_begin(e, id);
  ThreadState& t = thread_state(e.thread);
  scope_instances_.push_back(ScopeInstance{id, t.scope_top});
  t.scope_top = static_cast<std::uint32_t>(scope_instances_.size() - 1);
}

void Engine::on_scope_end(const Event& e, bool in_range) {
  ThreadState& t = thread_state(e.thread);
  std::uint32_t id = static_cast<std::uint32_t>(std::min<std::uint64_t>(e.aux, kMaxScopes - 1));
  if (taps_) taps_->scope_end(e, id);
  std::uint32_t inst = t.scope_top;
  while (inst != 0 && scope_instances_[inst].scope != id) inst = scope_instances_[inst].parent;
  if (inst == 0) return;  // an end without a begin on this thread
  end_scope_instance(t, inst, e, in_range);
}

void Engine::end_scope_instance(ThreadState& t, std::uint32_t inst, const Event& e, bool in_range) {
  ScopeInstance& si = scope_instances_[inst];
  t.scope_top = si.parent;  // also closes entries left open inside it
  if (!in_range) return;
  ScopeState& sc = scope_at(si.scope);
  ++sc.out.entries;
  block_trackers_.on_scope_entry_end(si.scope, inst, sc.out.entries, e.time_ns);
}

void Engine::on_mark_of_iteration(const Event& e, bool in_range) {
  const auto detail = static_cast<MarkDetail>(e.detail);
  if (iteration_mark_string_ == 0 && options_.iteration_mark.empty() &&
      options_.iterations_from_marks && detail == MarkDetail::iteration_begin) {
    iteration_mark_string_ = e.aux;
    iteration_name_ = string_of(e.aux);
  }
  if (iteration_mark_string_ == 0 || e.aux != iteration_mark_string_) return;
  if (detail == MarkDetail::user || detail == MarkDetail::iteration_begin) {
    on_iteration_mark(e, in_range);
  } else if (detail == MarkDetail::iteration_end) {
    // Closes the open iteration, if any; the next begin opens one.
    ThreadState& t = thread_state(e.thread);
    std::uint32_t inst = t.scope_top;
    while (inst != 0 && scope_instances_[inst].scope != kIterationScope)
      inst = scope_instances_[inst].parent;
    if (inst != 0) end_scope_instance(t, inst, e, in_range);
  }
}

void Engine::on_iteration_mark(const Event& e, bool in_range) {
  if (iteration_scope_.out.info.name.empty()) {
    iteration_scope_.out.info.name = iteration_name_;
    iteration_scope_.out.info.kind = ScopeKind::iteration;
  }
  ThreadState& t = thread_state(e.thread);
  std::uint32_t inst = t.scope_top;
  while (inst != 0 && scope_instances_[inst].scope != kIterationScope)
    inst = scope_instances_[inst].parent;
  if (inst != 0) end_scope_instance(t, inst, e, in_range);
  scope_instances_.push_back(ScopeInstance{kIterationScope, t.scope_top});
  t.scope_top = static_cast<std::uint32_t>(scope_instances_.size() - 1);
}

// ------------------------------------------------------------ results

// The range closes at the trace's end; a mark the options name but the
// trace lacks is the analysis' error.
void Engine::close_range(Analysis& a) {
  if (range_ == RangeState::inside) {
    range_to_ = std::min(options_.to_ns, summary_.last_event_ns);
    end_range();
  }
  if (!options_.from_mark.empty() && !from_mark_seen_ && a.error.empty())
    a.error = a.path + ": mark '" + options_.from_mark + "' not found in the trace";
  else if (!options_.to_mark.empty() && !to_mark_seen_ && a.error.empty())
    a.error = a.path + ": mark '" + options_.to_mark + "' not found after the range start";
  else if (!options_.iteration_mark.empty() && iteration_scope_.out.info.name.empty() &&
           a.error.empty())
    a.error = a.path + ": iteration mark '" + options_.iteration_mark + "' not found in the trace";
  if (range_ == RangeState::before) end_range();  // nothing in range: finals are the end state
  summary_.unmatched_frees += orphans_.size();
}

// Leaks: blocks allocated in the range and live at the end of the trace,
// told to the block trackers with their class (the leak counts count them,
// the large blocks keep the big ones).
void Engine::tell_leaks() {
  for (std::uint32_t slot = 0; slot < pool_count_; ++slot) {
    PoolState& p = pools_[slot];
    if (!p.included) continue;
    p.live.for_each([&](std::uint64_t address, LiveBlock& b) {
      if (!b.in_range) return;
      const auto cls = static_cast<LeakClass>(b.leak_class);
      if (cls == LeakClass::runtime)
        block_trackers_.on_unclassed_leak(slot, b, UnclassedLeak::runtime);
      else if (leaks_.ended_at_exec && cls == LeakClass::unknown)  // no scan ran: the image exec'd
        block_trackers_.on_unclassed_leak(slot, b, UnclassedLeak::exec_replaced);
      else
        block_trackers_.on_leak(slot, address, b, cls);
    });
  }
}

// The blocks live at the end, for the session's largest blocks.
void Engine::tap_live_blocks() {
  if (!taps_) return;
  for (std::size_t id = 0; id < pools_.size(); ++id) {
    if (!pools_[id].included) continue;
    pools_[id].live.for_each([&](std::uint64_t address, LiveBlock& b) {
      taps_->block(BlockLifetime{PoolId{static_cast<std::uint32_t>(id)}, SiteId{b.site}, address,
                                 b.size, b.time_ns, kTimeMax, b.thread},
                   last_time_ns_);
    });
  }
}

// The range's duration (the process-wide counters are the counters
// tracker's).
void Engine::settle_duration() {
  summary_.duration_ns =
      any_event_in_range_ ? summary_.last_event_ns - std::min(range_from_, summary_.first_event_ns)
                          : 0;
}

// The summary, then the sites, moved out.
void Engine::move_summary_and_sites(Analysis& a) {
  a.range_from_ns = range_from_;
  a.range_to_ns = range_to_;
  a.summary = summary_;

  // Drained chunk by chunk, so the sites are never held twice (nothing
  // reads sites_ after finish()).
  std::size_t index = 0;
  sites_.drain([&](SiteState&& s) {
    settle_peak(s);
    Site& out = a.sites.emplace_back();
    out.stack = s.stack;
    out.pool = s.pool;
    out.peak_bytes = s.peak_bytes;
    if (index < live_at_range_end_.size()) out.live_at_range_end = live_at_range_end_[index];
    ++index;
    block_trackers_.on_site_out(s.trackers, out);
  });
  live_at_range_end_ = {};
  a.leaks = std::move(leaks_);  // whether classified or exec'd; the counts are the tracker's
}

// The pools seen with blocks or segments, with their parents' names.
void Engine::move_pools(Analysis& a) {
  for (std::size_t id = 0; id < pools_.size(); ++id) {
    PoolState& p = pools_[id];
    bool active = p.known || p.has_blocks || p.has_segments;
    if (p.known) a.pool_names.push_back(p.out.info.name);
    if (!p.included || !active) continue;
    PoolStats out = std::move(p.out);
    if (out.info.parent != 0 && out.info.parent < pools_.size())
      out.parent_name = pools_[out.info.parent].out.info.name;
    out.upstream = p.is_upstream;
    out.has_segments = p.has_segments;
    block_trackers_.on_pool_out(p.trackers, out);
    a.pools.push_back(std::move(out));
  }
  // Parent names were read before the parents moved; fix those moved first.
  for (auto& ps : a.pools)
    if (ps.info.parent != 0 && ps.parent_name.empty())
      if (const PoolStats* parent = a.pool(PoolId{ps.info.parent}))
        ps.parent_name = parent->info.name;
}

void Engine::move_scopes(Analysis& a) {
  for (std::size_t id = 1; id <= std::max<std::size_t>(scopes_.size(), 1); ++id) {
    // The iteration scope of marks, if any, comes last (id == size).
    ScopeState& s = id < scopes_.size() ? scopes_[id] : iteration_scope_;
    if (s.out.info.name.empty() && s.out.entries == 0) continue;
    if (s.out.info.pool != 0 && s.out.info.pool < pools_.size())
      s.out.pool_name = pools_[s.out.info.pool].out.info.name;
    a.scopes.push_back(std::move(s.out));
    // Its growth and per-entry figures come from the scope growth tracker.
    block_trackers_.on_scope_out(id < scopes_.size() ? static_cast<std::uint32_t>(id)
                                                     : kIterationScope);
  }
}

// The tables the report reads.
void Engine::move_tables(Analysis& a) {
  a.threads = std::move(threads_);
  a.modules = std::move(modules_);
  // The table grew by doubling: up to half of it is padding past the last
  // node (4 MiB at 10^5 distinct stacks), kept as long as the Analysis.
  while (!stack_nodes_.empty() && stack_nodes_.back().id == 0) stack_nodes_.pop_back();
  stack_nodes_.shrink_to_fit();
  for (const StackNode& n : stack_nodes_)
    if (is_python_frame(n.ip))
      a.python_frames.emplace(python_frame_string(n.ip), string_of(python_frame_string(n.ip)));
  a.stack_nodes = std::move(stack_nodes_);
  a.header = header_;
}

void Engine::finish(Analysis& a) {
  close_range(a);
  tell_leaks();
  tap_live_blocks();
  settle_duration();
  move_summary_and_sites(a);
  move_pools(a);
  move_scopes(a);
  move_tables(a);
}

SegmentMap Engine::segment_map(std::uint32_t pool_id, bool merge_mapped) {
  SegmentMap m;
  if (pool_id >= pools_.size()) {
    m.error = "pool " + std::to_string(pool_id) + " not found in the trace";
    return m;
  }
  PoolState& p = pools_[pool_id];
  m.time_ns = summary_.last_event_ns;
  m.pool_state.info = p.out.info;
  m.pool_state.final_used_bytes = p.used;
  m.pool_state.final_reserved_bytes = p.reserved;
  m.pool_state.live_blocks = p.live.size();
  m.pool_state.has_segments = p.has_segments;
  std::vector<BlockInfo> blocks;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;
  p.live.for_each([&](std::uint64_t a, LiveBlock& b) {
    blocks.push_back(BlockInfo{a, b.size, b.time_ns, sites_[b.site].stack, b.thread});
    spans.emplace_back(a, b.size);
  });
  std::sort(blocks.begin(), blocks.end(),
            [](const BlockInfo& x, const BlockInfo& y) { return x.address < y.address; });
  std::size_t bi = 0;
  for (auto it = p.segments.begin(); it != p.segments.end();) {
    std::uint64_t addr = it->first, end = addr + it->second.size;
    bool mapped = merge_mapped && it->second.detail == SegmentDetail::map;
    for (++it; mapped && it != p.segments.end() && it->first == end &&
               it->second.detail == SegmentDetail::map;
         ++it)
      end += it->second.size;
    SegmentInfo si{addr, end - addr, {}};
    while (bi < blocks.size() && blocks[bi].address < addr)
      m.outside_segments.push_back(blocks[bi++]);
    while (bi < blocks.size() && blocks[bi].address < end) si.blocks.push_back(blocks[bi++]);
    m.segments.push_back(std::move(si));
  }
  while (bi < blocks.size()) m.outside_segments.push_back(blocks[bi++]);
  if (p.has_segments) m.fragmentation = compute_fragmentation(p.segments, spans, m.time_ns);
  return m;
}

}  // namespace memtrail::detail
