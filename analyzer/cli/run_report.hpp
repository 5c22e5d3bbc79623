// `memtrail report` of a run of several processes: one line per process
// (program, pid, parent, events, peak, leaks), then each leaking process's
// leak sites; or memtrail.run-report/1 JSON with every process's report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memtrail/analysis.hpp"
#include "memtrail/run_index.hpp"

namespace memtrail::cli {

// Returns the exit code: 0, or 2 when a process's trace could not be read
// (its line says why; the others are still reported).
int report_run(const std::string& name, const std::vector<RunProcess>& processes,
               const AnalysisOptions& options, bool json, std::uint64_t top);

}  // namespace memtrail::cli
