// The input of the analyzer commands: a .mtr trace, or a run directory
// written by `memtrail run`, whole or one process of it (--pid, --program).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli_args.hpp"
#include "memtrail/run_index.hpp"

namespace memtrail::cli {

struct ProcessSelection {
  std::optional<std::uint32_t> pid;
  std::string program;
  bool any() const { return pid.has_value() || !program.empty(); }
};

// Consumes --pid N or --program NAME.
bool take_selection_option(Args& args, ProcessSelection& selection);
#define MEMTRAIL_SELECTION_HELP                                                   \
  "  --pid N             of a run directory: only process N (each image of it)\n" \
  "  --program NAME      of a run directory: only the processes running NAME\n"

// The traces `input` names, in start order: the file itself, or the run's
// selected processes. nullopt after printing "memtrail CMD: ..." (exit 2):
// an unreadable run, an unknown pid or program, --pid on a plain trace.
std::optional<std::vector<RunProcess>> resolve_traces(const std::string& command,
                                                      const std::string& input,
                                                      const ProcessSelection& selection);

// resolve_traces() for commands that read one trace: a run of several
// processes without a selection that narrows it to one is an error that
// lists them.
std::optional<std::string> resolve_one_trace(const std::string& command, const std::string& input,
                                             const ProcessSelection& selection);

// "pid 4242 (make, exec 1)": how a process is named in reports and errors.
std::string describe_process(const RunProcess& p);

}  // namespace memtrail::cli
