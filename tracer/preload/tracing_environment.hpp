// The tracing environment (LD_PRELOAD with this library, the MEMTRAIL_*
// variables `memtrail run` set) as the program started with it, for the
// images it execs or spawns: one whose environment lost it gets it back
// (hooks_exec.cpp keeps it, in static storage).
#pragma once

#include <cstddef>

namespace memtrail::preload {

// Whether new images are meant to be traced: the environment was saved (not
// under --no-follow or attach).
bool following_new_images();

// Whether `envp` lacks one of the saved variables.
bool environment_lacks_tracing(char* const* envp);

// How many entries build_traced_environment may write for `envp`.
std::size_t traced_environment_entries(char* const* envp);

// `envp` (without any MEMTRAIL_EXEC_PID entry when `marker` is given), then
// each saved variable it lacks (one the program changed is kept as it is),
// then `marker` if not null, then the terminating null, into `out`.
// Touches no heap and takes no lock (a vfork child calls it).
void build_traced_environment(char* const* envp, char** out, char* marker);

// Whether `entry` is one of the saved variables' own strings (an entry that
// build_traced_environment added), not the program's.
bool is_tracer_entry(const char* entry);

}  // namespace memtrail::preload
