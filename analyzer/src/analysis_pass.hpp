// The one analysis pass that analyze() (the CLI) and Session::open (the GUI)
// both run: the reader feeds the Engine (through the trackers' visitors and
// the module preloader), then finish, symbolize, group the sites by source
// and take the heap pool's reserved bytes from the samples. What differs
// between the two callers is an option of the pass, not a second copy of a
// stage: the parallel reader and the preloader (the CLI), progress and cancel
// per stage (the GUI), and the trackers each plugs in.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "memtrail/analysis.hpp"
#include "memtrail/session.hpp"
#include "memtrail/trace_file.hpp"

namespace memtrail::detail {

class Engine;

// A metric that plugs into the pass beside the Engine's own figures. Each
// hook has a default that does nothing, so a tracker overrides the ones it
// needs. The Session's taps (series, scopes, ooms, blocks, checkpoints) are
// one (session_open.cpp); a new metric is one more tracker file.
class PassTracker {
 public:
  virtual ~PassTracker() = default;
  // Before the read: subscribe to the Engine's state changes
  // (Engine::set_taps) or keep the Engine for checkpoints.
  virtual void attach(Engine& /*engine*/) {}
  // The visitor the reader feeds in place of `next`; it must forward every
  // record to `next`. The default adds no visitor.
  virtual TraceVisitor& wrap(TraceVisitor& next) { return next; }
  // After Engine::finish (the Engine is gone): the figures are final, sites
  // are still one per (pool, recorded stack) and have no frames.
  virtual void finished(Analysis& /*a*/) {}
  // After symbolize, before the sites are grouped by source.
  virtual void symbolized(const Analysis& /*a*/) {}
  // After grouping: `merged[i]` is the index now of site i as symbolized()
  // saw it (null under group_by_address: nothing was merged).
  virtual void grouped(const Analysis& /*a*/, const std::vector<std::uint32_t>* /*merged*/) {}
};

// Progress by stage (LoadStage: reading in bytes of the file, finishing,
// symbolizing in sites); false cancels the pass.
using PassProgressFn =
    std::function<bool(LoadStage stage, std::uint64_t done, std::uint64_t total)>;

struct PassOptions {
  AnalysisOptions analysis;
  ProgressFn engine_progress;  // the Engine's, by events read (analyze()'s)
  PassProgressFn progress;
  std::uint64_t file_bytes = 0;  // the total of the reading progress
  unsigned decoders = 0;         // > 0: read_parallel with that many; 0: the pipeline
  bool preload_modules = false;  // open the stacks' modules beside the read
  // A failed read or a missing mark ends the pass (the Session); else the
  // error is noted and the rest runs on what was read (the CLI). A header
  // error and a cancel from `progress` always end it.
  bool stop_on_error = false;
  std::vector<PassTracker*> trackers;
};

// Why the pass ended early or with Analysis::error set.
enum class PassFailure : std::uint8_t {
  none,
  header,          // Analysis::error is the reader's header error
  truncated,       // damaged, the read itself ok (a cut file); allow_partial off
  corrupt,         // damaged, the read failed (a bad chunk); allow_partial off
  mark_not_found,  // Engine::finish set Analysis::error
  cancelled,
};

// Runs the pass over `reader` into `a` (path and options set here).
PassFailure run_analysis_pass(TraceReader& reader, const std::string& path,
                              const PassOptions& options, Analysis& a);

}  // namespace memtrail::detail
