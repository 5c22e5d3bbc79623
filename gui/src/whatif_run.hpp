// The What-if view's computation: one pool of a trace replayed through a
// policy by the same library calls `memtrail replay` makes
// (ReplayScript::from_trace + run_replay, or replay_workspace), so the peaks
// are the replay_summary / workspace_replay of `memtrail replay --json`.
// Beside them, the replayed reserved and allocated bytes over [t0, t1] in
// `points` buckets, each the most the policy held during the bucket (the
// level entering it included), for drawing beside the recorded series.
// Plain C++ (no Qt): it runs on a worker thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "memtrail/alloc/replay.hpp"
#include "memtrail/alloc/replay_workspace.hpp"
#include "whatif_spec.hpp"

namespace memtrail::gui {

// A level over time, bucketed: bucket i covers [t0 + i*step_ns, +step_ns).
struct LevelSeries {
  std::uint64_t t0 = 0, t1 = 0, step_ns = 1;
  std::vector<std::uint64_t> max;
  std::vector<std::uint8_t> has_data;  // 0 before the first level
  std::uint64_t peak() const;          // max over the buckets (0 when none)
};

// Builds a LevelSeries from levels set at non-decreasing times.
class LevelBuckets {
 public:
  LevelBuckets(std::uint64_t t0, std::uint64_t t1, std::size_t points);
  void set(std::uint64_t time_ns, std::uint64_t level);
  // The last level holds to t1.
  LevelSeries finish();

 private:
  void enter_to(std::size_t bucket);
  LevelSeries s_;
  std::size_t next_ = 0;  // first bucket the current level has not entered
  bool has_level_ = false;
  std::uint64_t level_ = 0;
};

struct WhatIfResult {
  WhatIfSpec spec;      // the pool filled in
  std::string error;    // one line; the rest is empty when set
  std::string warning;  // a cut trace, skipped frees (as memtrail replay warns)
  bool cancelled = false;
  bool workspace = false;  // `workspace_result` holds the numbers, else `replay`
  alloc::ReplayResult replay;
  alloc::WorkspaceReplayResult workspace_result;
  LevelSeries reserved, allocated;  // allocated: not for workspace
};

// Replays pool spec.pool (required) of `trace`. `wanted` is polled while it
// runs; when it turns false the replay stops and the result says cancelled.
WhatIfResult run_what_if(const std::string& trace, const WhatIfSpec& spec, std::uint64_t t0,
                         std::uint64_t t1, std::size_t points,
                         const std::function<bool()>& wanted = {});

}  // namespace memtrail::gui
