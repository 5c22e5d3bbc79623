// What-if: one pool of a recorded trace replayed through a policy (caching,
// BFC, malloc or a workspace), with the replayed reserved and allocated bytes
// over a time window in buckets. `memtrail replay --json --series N` and
// memtrail-gui's What-if view both call run_what_if, so the series the GUI
// draws are the numbers the CLI prints.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "memtrail/alloc/replay.hpp"
#include "memtrail/alloc/replay_workspace.hpp"

namespace memtrail::alloc {

// A level over time, bucketed: bucket i covers [t0 + i*step_ns, +step_ns),
// and holds the most the level was during it (the level entering it included).
struct LevelSeries {
  std::uint64_t t0 = 0, t1 = 0, step_ns = 1;
  std::size_t points = 1;  // as asked (the buckets are at most this many, plus one)
  std::vector<std::uint64_t> max;
  std::vector<std::uint8_t> has_data;  // 0 before the first level
  std::uint64_t peak() const;          // max over the buckets (0 when none)
};

// Builds a LevelSeries from levels set in time order. A level set before t0
// carries into the window; one set after t1 is never drawn.
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

struct WhatIfPolicy {
  std::string allocator = "caching";  // caching, bfc, malloc, workspace
  std::string pool = "malloc";
  std::string conf;            // as `memtrail replay --conf`
  std::uint64_t capacity = 0;  // 0: unbounded (not for workspace)
  std::string mark;            // workspace: the iteration scope or mark
  bool partial = false;        // a cut or damaged trace: replay what was read
  bool keep_addresses = false;
};

// The window the series cover; t0 == t1 == 0 means the replayed events'
// first to last recorded time.
struct SeriesWindow {
  std::uint64_t t0 = 0, t1 = 0;
  std::size_t points = 500;
};

struct WhatIfOutcome {
  bool workspace = false;  // `workspace_result` holds the numbers, else `replay`
  ReplayResult replay;
  WorkspaceReplayResult workspace_result;
  std::string warning;              // a cut trace (as memtrail replay warns)
  LevelSeries reserved, allocated;  // allocated: empty for workspace
};

// Thrown by run_what_if when `wanted` turned false.
class WhatIfCancelled : public std::runtime_error {
 public:
  WhatIfCancelled() : std::runtime_error("cancelled") {}
};

// Replays `policy` over `trace`. `sink` (optional) also gets the replay's
// stats and OOMs; `wanted` (optional) is polled and stops the replay with
// WhatIfCancelled. Throws ConfigError for a bad conf, ReplayError otherwise.
WhatIfOutcome run_what_if(const std::string& trace, const WhatIfPolicy& policy,
                          const SeriesWindow& window, ReplaySink* sink = nullptr,
                          const std::function<bool()>& wanted = {});

// {"t0_ns", "t1_ns", "points", "step_ns", "reserved": [...], "allocated": [...]}: a
// bucket before the first level is null; "allocated" is left out for a
// workspace.
nlohmann::json series_json(const WhatIfOutcome& outcome);

}  // namespace memtrail::alloc
