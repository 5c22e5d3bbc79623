// Sites as a reader sees them: the engine keys a site by (pool, recorded
// stack), so one source-level call site reached through several return
// addresses (an unrolled loop, the same function in several threads whose
// stacks end in different thread-start frames, inlined copies) would print
// as several entries with identical text. analyze() merges them here.
#pragma once

#include <cstdint>
#include <vector>

#include "memtrail/analysis.hpp"

namespace memtrail::detail {

// Merges the sites of `a` whose pools and symbolized stacks (function, file,
// line, inlined flag and module of every frame; module+offset where the
// function is unknown) are equal, remapping every site index (leak sites,
// large blocks). Run after symbolize_sites(). Returns, for each site index
// before the merge, its index after (the session maps stacks with it).
std::vector<std::uint32_t> group_sites_by_source(Analysis& a);

// Rebuilds Leaks::sites from the merged sites (leak_sites.hpp).
void rebuild_leak_sites(Analysis& a);

}  // namespace memtrail::detail
