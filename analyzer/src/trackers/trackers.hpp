// The metrics that plug into the analysis pass (analysis_pass.hpp), a file
// each: the pass runs every one for analyze() (the CLI) and Session::open
// (the GUI) alike, so what a tracker puts in the Analysis is in the report,
// the JSON and the GUI at once. A new metric is its file here and one line
// in standard_trackers() (trackers.cpp).
#pragma once

#include <memory>
#include <vector>

#include "analysis_pass.hpp"

namespace memtrail::detail {

// The process samples: their count, the peak RSS and the four sample series.
std::unique_ptr<PassTracker> make_samples_tracker(const AnalysisOptions& o);

// The user's marks (Analysis::marks).
std::unique_ptr<PassTracker> make_marks_tracker(const AnalysisOptions& o);

// `memtrail attach`, the events the recorder lost, the ending signal.
std::unique_ptr<PassTracker> make_run_end_tracker(const AnalysisOptions& o);

// The workspaces section (workspace_tracker.hpp).
std::unique_ptr<PassTracker> make_workspaces_tracker(const AnalysisOptions& o);

// The failed allocations per pool (PoolStats::ooms).
std::unique_ptr<PassTracker> make_ooms_tracker(const AnalysisOptions& o);

// The workspace resets and spills per scope (ScopeStats).
std::unique_ptr<PassTracker> make_scope_spills_tracker(const AnalysisOptions& o);

// Every tracker above, in the order their finished() runs.
std::vector<std::unique_ptr<PassTracker>> standard_trackers(const AnalysisOptions& o);

}  // namespace memtrail::detail
