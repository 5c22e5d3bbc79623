// What a trace file really holds once the traced program ended, read back
// from the file (its header, its end-of-trace marker), for memtrail run's
// final line: "trace written to X" only when every trace of the run is whole.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memtrail/run_index.hpp"

namespace memtrail::cli {

enum class TraceFileState {
  complete,     // header and end-of-trace marker
  incomplete,   // a readable header, no end marker (write failed, killed)
  unusable,     // empty, or the header is unreadable (detail: why)
  missing,      // no file (detail: why it could not be created, if known)
  directory,    // the path is a directory
  not_regular,  // a device, pipe, ... (/dev/full)
};

// `detail` (may be null) gets the reason for missing/unusable.
TraceFileState inspect_trace_file(const std::string& path, std::string* detail);

// The final line for a run directory: "trace written to NAME (N traces)"
// only when every trace is whole; else which are not, and why the
// program's own may not be (`wait_status` is the program's).
// `missing`: traces that could not be created ("the trace of pid N (why)");
// `lost`: events the tracer could not write ("pid N: M events ...").
std::string run_outcome_message(const RunIndex& run, const std::string& shown_name,
                                std::uint32_t root_pid, int wait_status,
                                const std::vector<std::string>& missing = {},
                                const std::vector<std::string>& lost = {});

}  // namespace memtrail::cli
