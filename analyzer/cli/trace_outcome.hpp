// What a trace file really holds once the traced program ended, read back
// from the file (its header, its end-of-trace marker), for memtrail run's
// final line: "trace written to X" only for a whole trace.
#pragma once

#include <string>

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

// The final line for the trace at `path` (as shown to the user) /
// `path_absolute` (as opened), given the program's wait status.
std::string trace_outcome_message(const std::string& path, const std::string& path_absolute,
                                  int status);

}  // namespace memtrail::cli
