// Sites filtered by a function of their backtrace (site_filter.hpp).
#include "memtrail/site_filter.hpp"

#include <vector>

#include "group_sites.hpp"

namespace memtrail {

namespace {

bool passes_through(const Site& s, const std::string& name) {
  for (const Frame& f : s.frames)
    if (f.function.find(name) != std::string::npos) return true;
  return false;
}

// Summary and leak totals from the kept sites of leaf pools.
void recount(Analysis& a) {
  Summary& s = a.summary;
  Leaks& l = a.leaks;
  s.allocations = s.bytes_allocated = s.temporary_allocations = 0;
  l.direct = l.indirect = l.reachable = l.possible = Tally{};
  for (const Site& site : a.sites) {
    if (const PoolStats* p = a.pool(site.pool); p && p->upstream) continue;
    s.allocations += site.calls;
    s.bytes_allocated += site.bytes_allocated;
    s.temporary_allocations += site.temporaries;
    l.direct += site.direct;
    l.indirect += site.indirect;
    l.reachable += site.reachable;
    l.possible += site.possible;
  }
  s.leaked = l.direct + l.indirect;
}

}  // namespace

std::size_t keep_sites_with_function(Analysis& a, const std::string& name) {
  constexpr std::uint32_t kGone = ~std::uint32_t{0};
  std::vector<std::uint32_t> new_index(a.sites.size(), kGone);
  std::deque<Site> kept;
  for (std::uint32_t i = 0; !a.sites.empty(); ++i) {
    if (passes_through(a.sites.front(), name)) {
      new_index[i] = static_cast<std::uint32_t>(kept.size());
      kept.push_back(std::move(a.sites.front()));
    }
    a.sites.pop_front();
  }
  a.sites = std::move(kept);
  std::vector<BlockLifetime> blocks;
  for (BlockLifetime b : a.large_blocks)
    if (b.site.value < new_index.size() && new_index[b.site.value] != kGone) {
      b.site = SiteId{new_index[b.site.value]};
      blocks.push_back(b);
    }
  a.large_blocks = std::move(blocks);
  detail::rebuild_leak_sites(a);
  recount(a);
  return a.sites.size();
}

}  // namespace memtrail
