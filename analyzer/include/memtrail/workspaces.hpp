// The workspaces section of an analysis: per ND4J-style workspace (a pool of
// kind `workspace`, alloc/workspace.hpp), what its cycles cost and whether
// learning made the loop body allocation-free.
//
// Definitions (docs/analyzer.md "Workspaces" has the long form):
// - a cycle is one scope_begin/scope_end of the workspace's pool;
//   `cycles` counts the scope_end events in range.
// - learned: from the first workspace_learn event on; a cycle counts as
//   "after learning" when it begins after that event.
// - system allocation: an `alloc` (not `reuse`) on the cycle's thread, while
//   the cycle is open, in a pool of kind heap, mmap or cuda (what the preload
//   and CUPTI tracers see). A trace with no such pool (recorded in-process
//   with memtrail::start, no preload) counts the allocations of the
//   allocator stack's `system` upstream pools instead. Counting one level
//   only keeps a spill from counting twice (its upstream records an alloc,
//   and the posix_memalign under it is a heap alloc too).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memtrail/ids.hpp"

namespace memtrail {

struct Analysis;

// All spills of a workspace from one call stack.
struct WorkspaceSpillSite {
  StackId stack{};  // of the spill event; kNoStack: none
  // The site of the spill's `alloc` in the workspace pool (same pool and
  // stack); kNoSite if that site is not in the analysis.
  static constexpr SiteId kNoSite{0xFFFFFFFFu};
  SiteId site = kNoSite;
  std::uint64_t spills = 0, bytes = 0;
};

struct WorkspaceReport {
  std::string name;  // the workspace pool's name (its id)
  PoolId pool{};
  std::uint64_t cycles = 0;
  std::uint64_t allocations = 0, reuses = 0;  // alloc + reuse in the pool; reuse = a bump
  double reuse_ratio = 0;                     // reuses / allocations
  std::uint64_t learned_size = 0;             // size of the last workspace_learn (0: never)
  std::uint64_t learn_events = 0;             // > 1: REALLOCATE growth or a rebuild
  std::uint64_t learned_in_cycle = 0;         // 1-based cycle of the first learn (0: never)
  std::uint64_t peak_cycle_bytes = 0;         // most bytes allocated in one cycle
  std::uint64_t peak_used_bytes = 0, peak_reserved_bytes = 0;  // the pool's (PoolStats)
  std::uint64_t spills = 0, spilled_bytes = 0;
  std::vector<WorkspaceSpillSite> spill_sites;  // by bytes, descending
  std::uint64_t cycles_after_learning = 0;
  std::uint64_t spills_after_learning = 0;
  std::uint64_t system_allocations = 0;  // in all cycles (see definitions)
  std::uint64_t system_allocations_after_learning = 0;
  std::uint64_t cycles_with_system_allocations_after_learning = 0;
  std::uint64_t max_system_allocations_per_cycle_after_learning = 0;
  double system_allocations_per_cycle_after_learning = 0;
};

// `workspaces` of report --json: workspaces_to_json (report_json.hpp).
// The WORKSPACES section of the text report ("" when there is none).
std::string workspaces_text(const Analysis& a);

}  // namespace memtrail
