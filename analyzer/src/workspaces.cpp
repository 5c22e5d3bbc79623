// The workspaces section: WorkspaceTracker (fed by the engine) and its JSON
// and text forms. Definitions: memtrail/workspaces.hpp.
#include <algorithm>
#include <cstdio>
#include <map>

#include "memtrail/analysis.hpp"
#include "memtrail/report_json.hpp"
#include "memtrail/report_text.hpp"
#include "memtrail/size.hpp"
#include "workspace_tracker.hpp"

namespace memtrail::detail {
namespace {

constexpr std::uint32_t kMaxThreads = 1u << 20;  // open_ grows to the thread id
constexpr std::uint64_t kMaxScopes = 1u << 16;   // as the engine's

}  // namespace

void WorkspaceTracker::on_pool(const PoolInfo& p, bool included) {
  if (p.id >= level_.size()) {
    level_.resize(p.id + 1, Level::none);
    ws_of_pool_.resize(p.id + 1, -1);
  }
  switch (p.kind) {
    case PoolKind::heap:
    case PoolKind::mmap:
    case PoolKind::cuda:
      level_[p.id] = Level::heap;
      has_heap_level_ = true;
      break;
    case PoolKind::system:
      level_[p.id] = Level::upstream;
      break;
    case PoolKind::workspace:
      level_[p.id] = Level::none;
      if (!included) break;
      if (ws_of_pool_[p.id] < 0) {
        ws_of_pool_[p.id] = static_cast<std::int32_t>(ws_.size());
        ws_.emplace_back();
      }
      ws_[ws_of_pool_[p.id]].out.pool = PoolId{p.id};
      ws_[ws_of_pool_[p.id]].out.name = p.name;
      active_ = true;
      break;
    default:
      level_[p.id] = Level::none;
      break;
  }
}

void WorkspaceTracker::on_scope(const ScopeInfo& s) {
  if (s.id >= kMaxScopes) return;
  if (s.id >= scope_pool_.size()) scope_pool_.resize(s.id + 1, 0);
  scope_pool_[s.id] = s.pool;
}

WorkspaceTracker::State* WorkspaceTracker::workspace_of_event(const Event& e) {
  if (State* ws = workspace_of(e.pool)) return ws;
  return e.aux < scope_pool_.size() ? workspace_of(scope_pool_[e.aux]) : nullptr;
}

WorkspaceTracker::State* WorkspaceTracker::workspace_of(std::uint32_t pool) {
  if (pool >= ws_of_pool_.size() || ws_of_pool_[pool] < 0) return nullptr;
  return &ws_[ws_of_pool_[pool]];
}

WorkspaceTracker::Cycle* WorkspaceTracker::open_cycle(std::uint32_t thread) {
  if (thread >= open_.size() || open_[thread].empty()) return nullptr;
  return &open_[thread].back();
}

void WorkspaceTracker::on_event(const Event& e, bool in_range) {
  switch (e.kind) {
    case EventKind::scope_begin:
      begin(e, in_range);
      return;
    case EventKind::scope_end:
      end(e, in_range);
      return;
    case EventKind::alloc:
    case EventKind::reuse: {
      if (State* ws = workspace_of(e.pool)) {
        if (!in_range) return;
        ++ws->out.allocations;
        if (e.kind == EventKind::reuse) ++ws->out.reuses;
        if (Cycle* c = open_cycle(e.thread); c && &ws_[c->ws] == ws) c->bytes += e.size;
        return;
      }
      if (e.kind == EventKind::alloc && e.pool < level_.size() && level_[e.pool] != Level::none)
        system_alloc(e, level_[e.pool], in_range);
      return;
    }
    case EventKind::workspace_learn:
      if (State* ws = workspace_of_event(e)) {
        if (!ws->learned && in_range) {
          const Cycle* c = open_cycle(e.thread);
          ws->out.learned_in_cycle = ws->out.cycles + (c ? 1 : 0);
        }
        ws->learned = true;
        if (in_range) {
          ws->out.learned_size = e.size;
          ++ws->out.learn_events;
        }
      }
      return;
    case EventKind::spill:
      if (State* ws = workspace_of_event(e); ws && in_range) {
        ++ws->out.spills;
        ws->out.spilled_bytes += e.size;
        const Cycle* c = open_cycle(e.thread);
        if (c && c->after_learning) ++ws->out.spills_after_learning;
        WorkspaceSpillSite& site = ws->spill_sites[e.stack];
        site.stack = StackId{e.stack};
        ++site.spills;
        site.bytes += e.size;
      }
      return;
    default:
      return;
  }
}

void WorkspaceTracker::begin(const Event& e, bool /*in_range*/) {
  State* ws = workspace_of_event(e);
  if (!ws || e.thread >= kMaxThreads) return;
  if (e.thread >= open_.size()) open_.resize(e.thread + 1);
  Cycle c;
  c.ws = static_cast<std::uint32_t>(ws - ws_.data());
  c.after_learning = ws->learned;
  open_[e.thread].push_back(c);
}

void WorkspaceTracker::end(const Event& e, bool in_range) {
  State* ws = workspace_of_event(e);
  if (!ws || e.thread >= open_.size()) return;
  auto& stack = open_[e.thread];
  // The innermost open cycle of this workspace (an inner one left open ends too).
  auto it =
      std::find_if(stack.rbegin(), stack.rend(), [&](const Cycle& c) { return &ws_[c.ws] == ws; });
  if (it == stack.rend()) return;
  const Cycle c = *it;
  stack.erase(std::next(it).base(), stack.end());
  if (!in_range) return;
  WorkspaceReport& out = ws->out;
  ++out.cycles;
  out.peak_cycle_bytes = std::max(out.peak_cycle_bytes, c.bytes);
  ws->heap_allocations += c.heap;
  ws->upstream_allocations += c.upstream;
  if (!c.after_learning) return;
  ++out.cycles_after_learning;
  ws->heap_after += c.heap;
  ws->upstream_after += c.upstream;
  ws->heap_max = std::max(ws->heap_max, c.heap);
  ws->upstream_max = std::max(ws->upstream_max, c.upstream);
  ws->heap_cycles += c.heap > 0;
  ws->upstream_cycles += c.upstream > 0;
}

void WorkspaceTracker::system_alloc(const Event& e, Level level, bool in_range) {
  Cycle* c = open_cycle(e.thread);
  if (!c || !in_range) return;
  (level == Level::heap ? c->heap : c->upstream) += 1;
}

void WorkspaceTracker::finish(Analysis& a) {
  std::map<std::pair<PoolId, StackId>, SiteId> site_of;
  bool any_spill = std::any_of(ws_.begin(), ws_.end(), [](const State& s) { return s.out.spills; });
  if (any_spill)
    for (std::uint32_t i = 0; i < a.sites.size(); ++i)
      if (workspace_of(a.sites[i].pool.value))
        site_of[{a.sites[i].pool, a.sites[i].stack}] = SiteId{i};
  for (State& s : ws_) {
    WorkspaceReport& out = s.out;
    out.reuse_ratio = out.allocations ? static_cast<double>(out.reuses) / out.allocations : 0;
    const PoolStats* p = a.pool(out.pool);
    if (!p) continue;  // left out of the analysis (no event in it)
    out.peak_used_bytes = p->peak_used_bytes;
    out.peak_reserved_bytes = p->peak_reserved_bytes;
    const bool heap = has_heap_level_;
    out.system_allocations = heap ? s.heap_allocations : s.upstream_allocations;
    out.system_allocations_after_learning = heap ? s.heap_after : s.upstream_after;
    out.max_system_allocations_per_cycle_after_learning = heap ? s.heap_max : s.upstream_max;
    out.cycles_with_system_allocations_after_learning = heap ? s.heap_cycles : s.upstream_cycles;
    out.system_allocations_per_cycle_after_learning =
        out.cycles_after_learning ? static_cast<double>(out.system_allocations_after_learning) /
                                        static_cast<double>(out.cycles_after_learning)
                                  : 0;
    for (auto& [stack, site] : s.spill_sites) {
      if (auto it = site_of.find({out.pool, StackId{stack}}); it != site_of.end())
        site.site = it->second;
      out.spill_sites.push_back(site);
    }
    std::sort(out.spill_sites.begin(), out.spill_sites.end(),
              [](const WorkspaceSpillSite& x, const WorkspaceSpillSite& y) {
                return x.bytes != y.bytes ? x.bytes > y.bytes : x.stack < y.stack;
              });
    a.workspaces.push_back(std::move(out));
  }
}

}  // namespace memtrail::detail

namespace memtrail {

nlohmann::json workspaces_to_json(const Analysis& a) {
  nlohmann::json list = nlohmann::json::array();
  for (const WorkspaceReport& w : a.workspaces) {
    nlohmann::json sites = nlohmann::json::array();
    for (const WorkspaceSpillSite& s : w.spill_sites) {
      nlohmann::json stack = s.site == WorkspaceSpillSite::kNoSite
                                 ? nlohmann::json::array()
                                 : frames_to_json(at(a.sites, s.site).frames);
      sites.push_back({{"spills", s.spills}, {"bytes", s.bytes}, {"stack", stack}});
    }
    list.push_back({{"name", w.name},
                    {"cycles", w.cycles},
                    {"allocations", w.allocations},
                    {"reuses", w.reuses},
                    {"reuse_ratio", w.reuse_ratio},
                    {"learned_size", w.learned_size},
                    {"learn_events", w.learn_events},
                    {"learned_in_cycle", w.learned_in_cycle},
                    {"peak_cycle_bytes", w.peak_cycle_bytes},
                    {"peak_used_bytes", w.peak_used_bytes},
                    {"peak_reserved_bytes", w.peak_reserved_bytes},
                    {"spills", w.spills},
                    {"spilled_bytes", w.spilled_bytes},
                    {"spill_sites", sites},
                    {"cycles_after_learning", w.cycles_after_learning},
                    {"spills_after_learning", w.spills_after_learning},
                    {"system_allocations", w.system_allocations},
                    {"system_allocations_after_learning", w.system_allocations_after_learning},
                    {"cycles_with_system_allocations_after_learning",
                     w.cycles_with_system_allocations_after_learning},
                    {"max_system_allocations_per_cycle_after_learning",
                     w.max_system_allocations_per_cycle_after_learning},
                    {"system_allocations_per_cycle_after_learning",
                     w.system_allocations_per_cycle_after_learning}});
  }
  return list;
}

std::string workspaces_text(const Analysis& a) {
  if (a.workspaces.empty()) return {};
  std::string out = "\nWORKSPACES\n";
  char line[512];
  for (const WorkspaceReport& w : a.workspaces) {
    std::snprintf(line, sizeof line,
                  "  %s: %llu cycles, learned %s in cycle %llu, peak cycle %s, reuse %.1f%%\n"
                  "    spilled %s in %llu spills (%llu after learning); system allocations "
                  "per cycle after learning: %.2f (%llu in %llu of %llu cycles)\n",
                  w.name.c_str(), static_cast<unsigned long long>(w.cycles),
                  format_size(w.learned_size).c_str(),
                  static_cast<unsigned long long>(w.learned_in_cycle),
                  format_size(w.peak_cycle_bytes).c_str(), 100.0 * w.reuse_ratio,
                  format_size(w.spilled_bytes).c_str(), static_cast<unsigned long long>(w.spills),
                  static_cast<unsigned long long>(w.spills_after_learning),
                  w.system_allocations_per_cycle_after_learning,
                  static_cast<unsigned long long>(w.system_allocations_after_learning),
                  static_cast<unsigned long long>(w.cycles_with_system_allocations_after_learning),
                  static_cast<unsigned long long>(w.cycles_after_learning));
    out += line;
    constexpr std::size_t kTextSites = 5;  // --json has them all
    for (std::size_t i = 0; i < w.spill_sites.size() && i < kTextSites; ++i) {
      const WorkspaceSpillSite& s = w.spill_sites[i];
      std::snprintf(line, sizeof line, "    %llu spills, %s from:\n",
                    static_cast<unsigned long long>(s.spills), format_size(s.bytes).c_str());
      out += line;
      if (s.site == WorkspaceSpillSite::kNoSite)
        out += "      (no stack recorded)\n";
      else
        out += format_stack(at(a.sites, s.site).frames, 2, "      ");
    }
    if (w.spill_sites.size() > kTextSites)
      out += "    ... " + std::to_string(w.spill_sites.size() - kTextSites) +
             " more spilling sites (report --json lists them)\n";
  }
  return out;
}

}  // namespace memtrail
