// The What-if view's computation: the analyzer's run_what_if
// (memtrail/alloc/what_if.hpp), the call `memtrail replay --json --series`
// makes, so the peaks and the series are the CLI's numbers. This file only
// turns the view's spec into a policy and errors into one line.
// Plain C++ (no Qt): it runs on a worker thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "memtrail/alloc/what_if.hpp"
#include "whatif_spec.hpp"

namespace memtrail::gui {

using alloc::LevelBuckets;
using alloc::LevelSeries;

struct WhatIfResult {
  WhatIfSpec spec;      // the pool filled in
  std::string error;    // one line; the rest is empty when set
  std::string warning;  // a cut trace (as memtrail replay warns)
  bool cancelled = false;
  bool workspace = false;  // `workspace_result` holds the numbers, else `replay`
  alloc::ReplayResult replay;
  alloc::WorkspaceReplayResult workspace_result;
  LevelSeries reserved, allocated;  // allocated: not for workspace
};

// The policy `memtrail replay` runs for `spec` (--allocator, --pool, --conf,
// --capacity, --iteration-mark).
alloc::WhatIfPolicy what_if_policy(const WhatIfSpec& spec);

// Replays pool spec.pool (required) of `trace` with its series over [t0, t1]
// in `points` buckets. `wanted` is polled while it runs; when it turns false
// the replay stops and the result says cancelled.
WhatIfResult run_what_if(const std::string& trace, const WhatIfSpec& spec, std::uint64_t t0,
                         std::uint64_t t1, std::size_t points,
                         const std::function<bool()>& wanted = {});

}  // namespace memtrail::gui
