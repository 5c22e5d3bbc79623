// One site's counters as JSON: the part `report --json` and the by-id JSON
// export share (each adds its own way of naming the stack).
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "memtrail/analysis.hpp"

namespace memtrail::detail {

// site, pool, calls, reuses, bytes_allocated, temporaries, peak_bytes,
// leaked_*, live_at_range_end_* and caller.
nlohmann::json site_counters_json(const Analysis& a, SiteId i);

}  // namespace memtrail::detail
