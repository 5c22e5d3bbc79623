// `report --filter-function NAME` (heaptrack_print's --filter-bt-function):
// only the allocations whose backtrace passes through a function.
#pragma once

#include <cstddef>
#include <string>

#include "memtrail/analysis.hpp"

namespace memtrail {

// Keeps the sites with a frame whose function name contains `name`, and
// recomputes from them what sites add up to: leak sites, the leak totals by
// class, and the summary's allocations, bytes allocated, temporary
// allocations and leaked bytes/blocks (leaf pools, as ever). Peaks,
// timelines, pools, histograms and the runtime class stay the whole
// process's: they are not sums over sites. Returns the sites kept.
std::size_t keep_sites_with_function(Analysis& a, const std::string& name);

}  // namespace memtrail
