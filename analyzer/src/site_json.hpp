// One site's counters as JSON: the part `report --json` and the by-id JSON
// export share (each adds its own way of naming the stack).
#pragma once

#include <cstdint>
#include <utility>

#include <nlohmann/json.hpp>

#include "memtrail/analysis.hpp"

namespace memtrail::detail {

// site, pool, calls, reuses, bytes_allocated, temporaries, peak_bytes,
// leaked_*, live_at_range_end_* and caller.
nlohmann::json site_counters_json(const Analysis& a, SiteId i);

// The `top_sites` lists both write, by key, in this order.
inline constexpr std::pair<const char*, SiteOrder> kTopSiteLists[] = {
    {"calls", SiteOrder::calls},
    {"bytes", SiteOrder::bytes},
    {"peak", SiteOrder::peak},
    {"temporaries", SiteOrder::temporaries},
    {"leaked", SiteOrder::leaked}};

}  // namespace memtrail::detail
