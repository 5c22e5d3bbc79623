// How a replay treats the way its trace was read (replay_trace.cpp and
// replay_workspace.cpp): one rule for both, that of `report` and `check`
// (analyzer/src/analyze.cpp): a damaged or cut trace is an error unless
// allow_partial; a missing end marker is a note.
#pragma once

#include <string>

#include "memtrail/trace_file.hpp"

namespace memtrail::alloc {

// The warning line for a trace read as `r` says (empty: nothing to say).
// Throws ReplayError, with a hint at --partial, for a cut or damaged trace
// unless `allow_partial`; then what was read before the damage is replayed.
std::string replay_read_status(const std::string& path, const ReadResult& r, bool allow_partial);

}  // namespace memtrail::alloc
