// The leak-site list of Analysis::leaks, built from the sites' tallies.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "memtrail/analysis.hpp"

namespace memtrail::detail {

// One entry per (site, class) that has blocks, for the sites of leaf pools
// (`is_upstream(pool)` false); listed as Valgrind lists them: definitely
// lost (direct), indirectly lost, possibly lost, still reachable; by bytes
// within a class.
std::vector<LeakSite> leak_sites_of(const std::deque<Site>& sites,
                                    const std::function<bool(PoolId pool)>& is_upstream);

}  // namespace memtrail::detail
