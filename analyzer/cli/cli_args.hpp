// Option parsing shared by the analyzer subcommands (report, diff, export,
// check...): an argv cursor, durations, and the time-range/pool options that
// every command accepts.
//
//   Args args("report", argc, argv);
//   while (!args.done()) {
//     if (args.flag("--json")) json = true;
//     else if (take_analysis_option(args, options)) {}
//     else if (args.is_option()) return args.unknown();
//     else files.push_back(args.take());
//   }
//   if (args.failed()) return args.usage_error();
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memtrail/analysis.hpp"
#include "memtrail/duration.hpp"

namespace memtrail::cli {

class Args {
 public:
  // argv[0] is the subcommand name (as main() passes it).
  Args(std::string command, int argc, char** argv);

  bool done() const { return failed() || pos_ >= args_.size(); }
  bool failed() const { return !error_.empty(); }
  const std::string& command() const { return command_; }

  // True if the current argument starts with '-' (and is not "-" itself).
  bool is_option() const;
  std::string take();  // the current argument, consumed

  // `--name` alone: consumed, returns true.
  bool flag(std::string_view name);
  // `--name VALUE` or `--name=VALUE`: consumed into `out`. A missing value
  // records an error ("--top needs a value").
  bool value(std::string_view name, std::string& out);
  // Like value(), then parsed as a non-negative integer.
  bool number(std::string_view name, std::uint64_t& out);

  // Records an error for the current argument: "unknown option '--x'".
  int unknown();
  void fail(std::string message);
  // Prints "memtrail CMD: ERROR (try 'memtrail CMD --help')" and returns 2.
  int usage_error() const;
  const std::string& error() const { return error_; }

 private:
  std::string command_;
  std::vector<std::string> args_;
  std::size_t pos_ = 0;
  std::string error_;
};

using memtrail::parse_duration_ns;  // memtrail/duration.hpp

// Consumes one of the options every analyzer command takes:
//   --from TIME  --to TIME  --from-mark NAME  --to-mark NAME  --pool NAME
//   --no-symbols  --no-symbol-cache  --partial
bool take_analysis_option(Args& args, AnalysisOptions& options);
// `--num-callers N`: frames printed per backtrace, 1..500 (Valgrind's
// option; report, check and diff take it, default kDefaultNumCallers).
inline constexpr std::uint64_t kDefaultNumCallers = 12;
bool take_num_callers(Args& args, std::uint64_t& out);
#define MEMTRAIL_NUM_CALLERS_HELP \
  "  --num-callers N     frames shown per site's backtrace (default 12)\n"
// Help text for the options above, for each command's --help.
extern const char* const kAnalysisOptionsHelp;

// The argument loop of the commands that read traces (report, diff, export):
// --help prints `usage` plus kAnalysisOptionsHelp, `own` consumes one of the
// command's own options (true when it did), then the analysis options, then
// positional trace files. Returns the exit code to return at once (0 after
// --help, 2 for an unknown option) or nullopt; other errors stay in `args`.
std::optional<int> parse_trace_command(Args& args, const char* usage, AnalysisOptions& options,
                                       std::vector<std::string>& files,
                                       const std::function<bool(Args&)>& own);
// Fails unless exactly one trace file was given.
void expect_one_trace(Args& args, const std::vector<std::string>& files);

// Validates options that depend on each other (--from after --to...).
bool check_analysis_options(Args& args, const AnalysisOptions& options);

// Prints the analysis' input error (exit 2) or warning (stderr, continue).
// A --pool the trace does not define is an error naming the trace's pools.
// No event read or in range: an error when `needs_events` (check: a gate
// must not pass on nothing), else a note. Returns 0 when the analysis is
// usable, 2 otherwise.
int report_input_status(const std::string& command, const Analysis& a, bool needs_events = false);

// Flushes stdout; a failed write (closed pipe, full disk) is an error of the
// command, not silent data loss: one line on stderr and exit code 2.
// Returns `rc` when the report reached stdout.
int finish_stdout_report(const std::string& command, int rc = 0);

}  // namespace memtrail::cli
