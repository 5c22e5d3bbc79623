// What-if replay of a workspace: the allocations a recorded program made in
// each iteration of its loop, driven through a real Workspace (workspace.hpp)
// over a virtual host upstream (nothing is allocated), to learn before
// writing one whether a workspace would make the loop allocation-free.
//
// Iterations come from the trace: the entries of the scope named `mark`
// (scope_begin to its scope_end on the same thread), or, when the trace has
// no scope of that name, the spans between consecutive `mark` events with
// that text (a mark at the start of each iteration and one after the last:
// the allocations after the final mark are not an iteration). Only the
// allocations of pool `pool` made on the iteration's thread count; each one
// `alloc` of the recording was a system allocation (a `reuse`, a pool's cache
// hit, was not).
// The trace is read as it runs: memory is bounded by one iteration's live
// blocks, not by the length of the trace.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "memtrail/alloc/workspace_config.hpp"

namespace memtrail::alloc {

struct WorkspaceReplayOptions {
  std::string pool = "malloc";  // the recorded pool whose allocations are replayed
  std::string mark;             // iteration scope or mark text
  WorkspaceConfiguration config;
  bool allow_partial = false;  // a cut or damaged trace: replay what was read
  // Optional: called with the recorded time of each event after which the
  // bytes the workspace holds from its upstream changed (memtrail-gui's
  // What-if view draws them as the replayed reserved series).
  std::function<void(std::uint64_t time_ns, std::uint64_t reserved_bytes)> on_reserved;
};

struct WorkspaceReplayResult {
  bool by_scope = false;  // iterations were scope entries (else marks)
  std::uint64_t iterations = 0;
  std::uint64_t allocations = 0, bytes = 0;   // in iterations, as recorded (requested bytes)
  std::uint64_t allocations_outside = 0;      // of the pool, outside every iteration
  std::uint64_t learned_size = 0;             // the workspace's buffer at the end (0: none)
  std::uint64_t learned_after_iteration = 0;  // 1-based; 0 = never learned
  std::uint64_t peak_iteration_bytes = 0;     // most bytes (16-byte rounded) in one iteration
  std::uint64_t spills = 0, spills_after_learning = 0;
  std::uint64_t failed_allocations = 0;  // policySpill FAIL: the program would have thrown
  // Iterations that began with the workspace holding its buffer (learned, or
  // an initialSize), and the system allocations in them: as recorded (the
  // pool's `alloc` events, not its `reuse`s), and with the workspace (its
  // buffer and spill requests to the upstream).
  std::uint64_t iterations_after_learning = 0;
  std::uint64_t recorded_allocations_after_learning = 0;
  std::uint64_t system_allocations_after_learning = 0;
  // Blocks allocated in an iteration and not freed by its end: in a workspace
  // they would have to be detached or leveraged to an outer workspace.
  std::uint64_t escaping_allocations = 0;
  std::string warning;  // one line (cut trace, ...); empty if none

  double recorded_per_iteration_after_learning() const;
  double system_per_iteration_after_learning() const;
  double removed_per_iteration() const;  // the difference of the two
};

// Throws ReplayError (replay.hpp) for an unreadable trace, an unknown pool,
// or a mark / scope name the trace does not have; ConfigError for an invalid
// configuration. An MMAP location or HOST_ONLY mirroring is replayed as RAM
// / FULL over the virtual host (same sizes, no file, no real memory).
WorkspaceReplayResult replay_workspace(const std::string& trace,
                                       const WorkspaceReplayOptions& options);

}  // namespace memtrail::alloc
