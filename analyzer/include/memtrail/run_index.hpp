// A run: the directory `memtrail run` writes, one trace per process image
// named <pid>.<seq>.<program>.mtr (<seq> counts the images of one pid across
// exec). The process tree is read from the trace headers (pid, ppid, command
// line, start time), so a run whose `memtrail run` was killed still reads.
//
//   std::string error;
//   auto run = memtrail::read_run("memtrail.make.4242", &error);
//   for (const memtrail::RunProcess& p : run->processes) analyze(p.file, opt);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memtrail {

struct RunProcess {
  std::string file;  // path of the trace
  std::string name;  // file name inside the run directory
  std::uint32_t pid = 0;
  std::uint32_t ppid = 0;
  std::uint32_t sequence = 0;  // 0 = as started or forked, N = after the Nth exec
  std::string program;         // from the file name
  std::string command_line;    // from the header
  std::string executable;
  std::uint64_t start_realtime_ns = 0;
  std::string header_error;  // non-empty: listed, but the header is unreadable
  // The exit status `memtrail run` wrote to index.tsv (the root process's
  // last image); nullopt when unknown.
  std::optional<int> exit_status;
};

struct RunIndex {
  std::string directory;
  std::vector<RunProcess> processes;  // by start time, then pid and sequence
};

// True when `path` is a directory (what `memtrail run` writes).
bool is_run_directory(const std::string& path);

// Lists the run's traces and reads their headers. nullopt + one-line error
// when the directory cannot be read or holds no trace.
std::optional<RunIndex> read_run(const std::string& directory, std::string* error);

// The processes whose pid is `pid` (every image of it) or whose program is
// `program`; empty + one-line error naming the pid or program otherwise.
std::vector<RunProcess> select_processes(const RunIndex& run, std::optional<std::uint32_t> pid,
                                         const std::string& program, std::string* error);

// index.tsv: a header line, then one line per image: pid, ppid, seq,
// program, start (realtime ns), exit status ("-" unless known), file,
// command line.
std::string run_index_tsv(const RunIndex& run, std::uint32_t root_pid, int root_exit_status);

// True for the entries a run directory may hold: traces (*.mtr), their
// symbol caches (*.mtr.symbols) and event tallies (*.mtr.tally), index.tsv
// and the run's lock file.
bool is_run_entry(const std::string& name);
inline constexpr const char* kRunLockFile = ".memtrail-run.lock";
inline constexpr const char* kRunIndexFile = "index.tsv";
// Traces that could not be created or are short of events, one
// "PID\tmissing\tWHY" or "PID\tlost\tWHAT" line each, appended by
// the tracer (tracer/src/run_naming.cpp spells the name too); memtrail run
// creates it empty and names the missing traces in its final line.
inline constexpr const char* kRunMissingFile = ".memtrail-run.missing";

// The traces of the run that could not be written, as `memtrail run` left
// them in kRunMissingFile: "the trace of pid PID (WHY)" each. Empty when
// the run is whole (or `directory` is not a run directory).
std::vector<std::string> read_missing_traces(const std::string& directory);

// Removes a run directory's entries (and the directory when `and_directory`);
// refuses, with a one-line error, a directory holding anything else.
bool clear_run_directory(const std::string& directory, bool and_directory, std::string* error);

}  // namespace memtrail
