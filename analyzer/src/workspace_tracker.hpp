// Feeds the workspaces section (memtrail/workspaces.hpp) from the engine's
// event stream. Idle (one branch per event in the engine) until the trace
// defines a pool of kind `workspace`.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "memtrail/event.hpp"
#include "memtrail/workspaces.hpp"

namespace memtrail {
struct Analysis;
}

namespace memtrail::detail {

class WorkspaceTracker {
 public:
  bool active() const { return active_; }
  // Every pool (system allocations are counted in pools left out of the
  // analysis too); a workspace gets a section only when `included`.
  void on_pool(const PoolInfo& p, bool included);
  void on_scope(const ScopeInfo& s);
  // Every event once active(); `in_range` as the engine decided it.
  void on_event(const Event& e, bool in_range);
  // After the engine moved its pools and sites into `a`.
  void finish(Analysis& a);

 private:
  struct Cycle {
    std::uint32_t ws = 0;  // index into ws_
    bool after_learning = false;
    std::uint64_t bytes = 0;
    std::uint64_t heap = 0, upstream = 0;  // system allocations, counted at each level
  };
  struct State {
    WorkspaceReport out;
    bool learned = false;
    std::uint64_t heap_allocations = 0, upstream_allocations = 0;  // all cycles
    std::uint64_t heap_after = 0, upstream_after = 0;              // after learning
    // Per cycle after learning, the most and how many cycles had any, for
    // each way of counting (heap kinds, upstreams).
    std::uint64_t heap_max = 0, upstream_max = 0, heap_cycles = 0, upstream_cycles = 0;
    std::unordered_map<std::uint32_t, WorkspaceSpillSite> spill_sites;  // by stack
  };
  enum class Level : std::uint8_t { none, heap, upstream };

  State* workspace_of(std::uint32_t pool);
  // The workspace an event names: its pool, or the pool of its scope (aux).
  State* workspace_of_event(const Event& e);
  Cycle* open_cycle(std::uint32_t thread);
  void begin(const Event& e, bool in_range);
  void end(const Event& e, bool in_range);
  void system_alloc(const Event& e, Level level, bool in_range);

  bool active_ = false;
  bool has_heap_level_ = false;           // a heap/mmap/cuda pool exists: count at that level
  std::vector<Level> level_;              // pool id -> where it sits
  std::vector<std::int32_t> ws_of_pool_;  // pool id -> index into ws_, -1 = none
  std::vector<State> ws_;
  std::vector<std::uint32_t> scope_pool_;  // scope id -> its pool (ScopeInfo::pool)
  // Open cycles per thread, innermost last (workspaces nest).
  std::vector<std::vector<Cycle>> open_;
};

}  // namespace memtrail::detail
