// Leak sites in the order a Valgrind or LeakSanitizer user reads them.
#include "leak_sites.hpp"

#include <algorithm>

namespace memtrail::detail {

namespace {

int rank(LeakClass kind) {
  switch (kind) {
    case LeakClass::direct:
      return 0;
    case LeakClass::indirect:
      return 1;
    case LeakClass::possible:
      return 2;
    case LeakClass::reachable:
      return 3;
    default:
      return 4;
  }
}

}  // namespace

std::vector<LeakSite> leak_sites_of(const std::deque<Site>& sites,
                                    const std::function<bool(PoolId pool)>& is_upstream) {
  std::vector<LeakSite> out;
  for (std::uint32_t n = 0; n < sites.size(); ++n) {
    const SiteId i{n};
    const Site& s = sites[n];
    if (is_upstream(s.pool)) continue;
    if (s.direct.blocks) out.push_back({i, LeakClass::direct, s.direct});
    if (s.indirect.blocks) out.push_back({i, LeakClass::indirect, s.indirect});
    if (s.possible.blocks) out.push_back({i, LeakClass::possible, s.possible});
    if (s.reachable.blocks) out.push_back({i, LeakClass::reachable, s.reachable});
  }
  std::stable_sort(out.begin(), out.end(), [](const LeakSite& x, const LeakSite& y) {
    if (x.kind != y.kind) return rank(x.kind) < rank(y.kind);
    if (x.tally.bytes != y.tally.bytes) return x.tally.bytes > y.tally.bytes;
    return x.site < y.site;
  });
  return out;
}

}  // namespace memtrail::detail
