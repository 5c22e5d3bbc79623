// The run directory of `memtrail run`: created (or a stale one emptied) and
// locked before the program starts, so two runs never write one directory;
// summed up (index.tsv, one line on stderr) when the program has exited.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace memtrail::cli {

// Makes `directory` ready for a new run and returns the descriptor holding
// its lock (kept until exit), or -1 after printing one line (exit 2): the
// directory is in use by another run, holds foreign files, or cannot be made.
int prepare_run_directory(const std::string& directory);

// Writes index.tsv and prints the run's one final line: where it went when
// every trace is whole, else which traces are not and why (trace_outcome.hpp),
// or that nothing was traced (then removes the empty directory).
// `wait_status` is the program's, from waitpid; `quiet` leaves out the line
// when every trace is whole. False when a process's trace could not be
// created (the tracer listed it in kRunMissingFile; the line names it).
bool finish_run_directory(const std::string& directory, const std::string& shown_name,
                          pid_t root_pid, int wait_status, bool quiet = false);

// Appends `lines` ("PID\tmissing\tWHY") to the run's list of missing traces
// in `directory` (kRunMissingFile), as each image's tracer does; `run`'s
// watch for untraced images (untraced_watch.hpp) says its finds so.
void add_to_run_list(const std::string& directory, const std::vector<std::string>& lines);

}  // namespace memtrail::cli
