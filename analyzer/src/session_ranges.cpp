// Answers about a time range (largest blocks, scope entries, a ranged
// analysis) and the symbolized frames of any stack.
#include <algorithm>
#include <tuple>

#include "group_sites.hpp"
#include "session_impl.hpp"
#include "symbolize_sites.hpp"

namespace memtrail {

std::vector<BlockLifetime> Session::largest_blocks(std::uint64_t t0, std::uint64_t t1,
                                                   std::size_t n) const {
  const Impl& s = *impl_;
  std::vector<BlockLifetime> out;
  if (t1 < t0 || n == 0) return out;
  s.taps->blocks_.collect(t0, t1, out);
  for (const BlockLifetime& b : s.whole.large_blocks)
    if (b.alloc_ns <= t1 && b.free_ns >= t0) out.push_back(b);
  // A block may be in several slices' nodes and in whole().large_blocks.
  auto key = [](const BlockLifetime& b) { return std::tie(b.pool, b.address, b.alloc_ns); };
  std::sort(out.begin(), out.end(), [&](const auto& x, const auto& y) { return key(x) < key(y); });
  out.erase(std::unique(out.begin(), out.end(),
                        [&](const auto& x, const auto& y) { return key(x) == key(y); }),
            out.end());
  auto upstream = [&](PoolId pool) {
    return pool.value < s.upstream.size() && s.upstream[pool.value];
  };
  auto larger = [&](const BlockLifetime& x, const BlockLifetime& y) {
    if (x.size != y.size) return x.size > y.size;
    if (upstream(x.pool) != upstream(y.pool)) return !upstream(x.pool);  // leaf pools first
    return x.alloc_ns < y.alloc_ns;
  };
  if (out.size() > n) {
    std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n), out.end(), larger);
    out.resize(n);
  }
  std::stable_sort(out.begin(), out.end(), [](const BlockLifetime& x, const BlockLifetime& y) {
    return x.alloc_ns < y.alloc_ns;
  });
  return out;
}

std::vector<ScopeInterval> Session::scope_intervals(std::uint64_t t0, std::uint64_t t1,
                                                    std::size_t max) const {
  std::vector<ScopeInterval> out;
  for (const ScopeInterval& s : impl_->taps->scopes_) {
    if (out.size() >= max) break;
    if (s.begin_ns <= t1 && s.end_ns >= t0) out.push_back(s);
  }
  std::stable_sort(out.begin(), out.end(), [](const ScopeInterval& x, const ScopeInterval& y) {
    return x.begin_ns < y.begin_ns;
  });
  return out;
}

std::shared_ptr<const Analysis> Session::analyze_range(std::uint64_t t0, std::uint64_t t1,
                                                       const LoadProgressFn& progress) const {
  AnalysisOptions o = impl_->options.analysis;
  o.from_ns = t0;
  o.to_ns = t1;
  o.from_mark.clear();
  o.to_mark.clear();
  // Frames come from the session's cache below, not from a second DWARF pass.
  o.symbolize = false;
  o.symbol_cache = false;
  std::uint64_t total = impl_->whole.read.events;
  auto a = std::make_shared<Analysis>(analyze(impl_->path, o, [&](std::uint64_t events) {
    return !progress || progress(LoadProgress{LoadStage::reading, events, total});
  }));
  a->options.symbolize = impl_->options.analysis.symbolize;
  a->options.symbol_cache = impl_->options.analysis.symbol_cache;
  if (!a->error.empty()) return a;
  // A stack of whole() shares its interned frames; others get their own.
  for (Site& site : a->sites) {
    const Site* whole_site = impl_->site_with_stack(site.stack);
    site.frames = whole_site ? whole_site->frames : FrameList(frames(site.stack));
  }
  // Merged by their symbolized stacks now that they have them, as whole()'s.
  a->frame_table = impl_->whole.frame_table;
  if (!o.group_by_address) detail::group_sites_by_source(*a);
  a->symbol_warnings = impl_->whole.symbol_warnings;
  return a;
}

const Site* detail::SessionState::site_with_stack(StackId stack) const {
  auto it = std::lower_bound(site_of_stack.begin(), site_of_stack.end(), stack.value,
                             [](const auto& entry, std::uint32_t s) { return entry.first < s; });
  return it != site_of_stack.end() && it->first == stack.value ? &whole.sites[it->second] : nullptr;
}

std::vector<Frame> Session::frames(StackId stack) const {
  const Impl& s = *impl_;
  // site_of_stack is immutable after open(): no lock.
  if (const Site* site = s.site_with_stack(stack)) return site->frames.to_vector();
  std::lock_guard lock(s.symbols_mu);
  auto it = s.frames.find(stack);
  if (it != s.frames.end()) return it->second;
  if (!s.symbolizer) {
    s.symbolizer = std::make_unique<Symbolizer>();
    s.symbolizer->set_enabled(s.options.analysis.symbolize);
    for (const ModuleInfo& m : s.whole.modules) s.symbolizer->add_module(m);
  }
  std::vector<Frame> out;
  for (std::uint64_t ip : s.whole.stack_ips(stack)) {
    if (is_python_frame(ip)) {
      out.push_back(detail::python_frame(s.whole, ip));
      continue;
    }
    const auto& f = s.symbolizer->resolve(ip, true);
    out.insert(out.end(), f.begin(), f.end());
  }
  return s.frames.emplace(stack, std::move(out)).first->second;
}

}  // namespace memtrail
