// After the program of `memtrail run` ended: the event tallies its
// processes left in the run directory (memtrail/event_tally.hpp). A tally
// is left only by a process that ended without finishing its trace (a raw
// exit_group, SIGKILL, a failed write); it says how many of the events the
// process made are not in the file. Each such trace is cut back to its last
// whole chunk and ended with a `lost` mark of that many events
// (LostReason::process_ended) and its end marker, so report, report --json
// and check say the loss, counted.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace memtrail::cli {

// One "pid PID: N events not written to NAME: why" line per trace that lost
// events (for run's final line); removes the tallies it settled. A tally of
// a process still running (a daemon that outlived the program) is left alone.
std::vector<std::string> settle_event_tallies(const std::string& directory, pid_t root_pid,
                                              int wait_status);

}  // namespace memtrail::cli
