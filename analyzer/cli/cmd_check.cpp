// memtrail check: the CI gate. Parses options and a policy file, runs the
// analysis and prints the verdicts computed by memtrail/check.hpp.
// Exit codes: 0 every limit held, 1 a limit was exceeded (or, with --run, the
// program failed), 2 usage or input error.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "cli_args.hpp"
#include "commands.hpp"
#include "memtrail/check.hpp"
#include "memtrail/gen_suppressions.hpp"
#include "memtrail/report_json.hpp"
#include "memtrail/size.hpp"
#include "progress_line.hpp"
#include "run_input.hpp"

namespace memtrail::cli {
namespace {

void print_usage() {
  std::printf(
      "usage: memtrail check TRACE|RUN [OPTIONS] [--pid N | --program NAME]\n"
      "       memtrail check [OPTIONS] --run [--trace FILE] -- PROGRAM [ARGS...]\n"
      "\n"
      "Fails (exit 1) when a trace exceeds its memory limits; exit 2 on bad input.\n"
      "With no limit and no baseline, any leak fails.\n"
      "\n"
      "limits:\n"
      "  --max-leaked SIZE        leaked bytes (direct + indirect) allowed, e.g. 0, 4KiB\n"
      "  --max-leaked-blocks N    leaked blocks allowed\n"
      "  --max-peak SIZE          peak used bytes (process-wide, or per --pool)\n"
      "  --max-reserved SIZE      peak reserved bytes of each pool\n"
      "  --max-scope-growth SIZE  growth per iteration of any scope (tidy scopes, or the\n"
      "                           --iteration-mark loop), e.g. 0\n"
      "  --suppressions FILE      LeakSanitizer-style 'leak:PATTERN' lines (repeatable)\n"
      "  --no-default-suppressions  keep the C/C++ runtime's one-time allocations\n"
      "  --baseline FILE          fail on new leak sites, grown leaks, or peaks above it\n"
      "  --tolerance PCT          allowed peak growth over the baseline (default 0)\n"
      "  --write-baseline FILE    write this trace's leak sites and peaks as a baseline\n"
      "  --policy FILE            JSON with limits and suppressions (flags override it)\n"
      "  --junit FILE             write a JUnit XML report (one testcase per limit)\n"
      "  --top N                  offending sites shown per failure (default 5)\n"
      "  --num-callers N          frames shown per offending site (default 12)\n"
      "  --show-leak-kinds K,...  leak classes that count: definite, indirect, possible,\n"
      "                           reachable, all (default definite,indirect)\n"
      "  --gen-suppressions       print a 'leak:' rule for each failing leak site on stdout\n"
      "  --accept-lost-events     pass a trace short of some of the program's events (the\n"
      "                           tracer said it lost them, or the trace was cut); by\n"
      "                           default such a trace fails the 'lost-events' item\n"
      "  --run                    run PROGRAM under 'memtrail run' first, then check\n"
      "  --trace DIR              with --run: keep the run directory here (default: temporary)\n"
      "  --pid N, --program NAME  of a run directory: check only that process (default:\n"
      "                           every process, one exit code)\n"
      "\n"
      "analysis:\n%s",
      kAnalysisOptionsHelp);
}

struct Flags {
  std::optional<std::uint64_t> max_leaked, max_leaked_blocks, max_peak, max_reserved,
      max_scope_growth;
  std::optional<double> tolerance;
  std::optional<std::size_t> top;
  std::uint64_t num_callers = kDefaultNumCallers;
  std::vector<std::string> suppression_files;
  bool no_default_suppressions = false;
  std::string baseline, write_baseline, junit, policy, trace, run_trace;
  bool run = false;
  bool gen_suppressions = false;
  bool accept_lost_events = false;
  std::optional<LeakKinds> leak_kinds;
  std::vector<std::string> program;
};

bool size_value(Args& args, const char* name, std::optional<std::uint64_t>& out) {
  std::string v;
  if (!args.value(name, v)) return false;
  if (args.failed()) return true;
  std::string why;
  if (auto n = parse_size(v, &why))
    out = *n;
  else
    args.fail(std::string(name) + ": " + why);
  return true;
}

// Runs `memtrail run` (this same binary) on the program; returns its exit
// status, or -1 with a message when it could not be started.
int run_program(const std::string& trace, const std::vector<std::string>& program) {
  std::vector<std::string> argv_s = {"memtrail", "run", "--no-follow", "--quiet",
                                     "-o",       trace, "--"};
  argv_s.insert(argv_s.end(), program.begin(), program.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    execv("/proc/self/exe", argv.data());
    std::fprintf(stderr, "memtrail check: cannot run memtrail run\n");
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The verdicts of one trace: 0 passed, 1 failed, 2 input error.
int check_one(const Flags& f, const CheckConfig& config, const AnalysisOptions& options,
              SuppressionSet& suppressions, const Baseline& baseline, const std::string& trace,
              std::chrono::steady_clock::time_point started) {
  Analysis a = analyze_with_progress("check", trace, options);
  // A misspelt pool or a trace with no events would otherwise pass every limit.
  if (int rc = report_input_status("check", a, true); rc != 0) return rc;

  CheckResult result =
      run_check(a, config, suppressions, config.baseline.empty() ? nullptr : &baseline);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  if (!f.write_baseline.empty()) {
    std::ofstream out(f.write_baseline, std::ios::binary | std::ios::trunc);
    out << baseline_to_json(make_baseline(a, suppressions)).dump(2) << "\n";
    if (!out) {
      std::fprintf(stderr, "memtrail check: cannot write baseline '%s'\n",
                   f.write_baseline.c_str());
      return 2;
    }
  }
  if (!f.junit.empty()) {
    std::ofstream out(f.junit, std::ios::binary | std::ios::trunc);
    out << to_junit_xml(result, "memtrail check " + (f.run ? f.program[0] : trace), seconds);
    if (!out) {
      std::fprintf(stderr, "memtrail check: cannot write JUnit report '%s'\n", f.junit.c_str());
      return 2;
    }
  }
  std::fputs(format_check_text(result, suppressions).c_str(), result.passed() ? stdout : stderr);
  if (f.gen_suppressions)
    std::fputs(generate_suppressions(a, config, suppressions, result).c_str(), stdout);
  return result.passed() ? 0 : 1;
}

// Every process of a run, each against the same limits: one exit code, 1
// when any process fails, 2 when any trace is unreadable. A process without
// the --pool pools is skipped, but some process must have them.
int check_processes(const Flags& f, const std::vector<RunProcess>& processes,
                    const CheckConfig& config, const AnalysisOptions& options,
                    SuppressionSet& suppressions) {
  int failed = 0, unreadable = 0, checked = 0;
  for (const RunProcess& p : processes) {
    std::string title = "memtrail check: " + describe_process(p) + ": " + p.command_line + "\n";
    Analysis a = analyze_with_progress("check", p.file, options);
    if (!p.header_error.empty() || !a.error.empty()) {
      std::fputs(title.c_str(), stderr);
      report_input_status("check", a);
      ++unreadable;
      continue;
    }
    bool has_pools = true;
    for (const std::string& name : config.pools) has_pools &= a.pool_by_name(name) != nullptr;
    if (!has_pools) continue;
    ++checked;
    CheckResult result = run_check(a, config, suppressions, nullptr);
    std::FILE* out = result.passed() ? stdout : stderr;
    std::fputs(title.c_str(), out);
    std::fputs(format_check_text(result, suppressions).c_str(), out);
    if (f.gen_suppressions)
      std::fputs(generate_suppressions(a, config, suppressions, result).c_str(), stdout);
    failed += result.passed() ? 0 : 1;
  }
  if (checked == 0 && unreadable == 0) {
    std::fprintf(stderr, "memtrail check: no process of the run has pool '%s'\n",
                 config.pools.empty() ? "" : config.pools.front().c_str());
    return 2;
  }
  std::printf("memtrail check: %d of %zu traces failed%s\n", failed, processes.size(),
              unreadable ? (", " + std::to_string(unreadable) + " unreadable").c_str() : "");
  return unreadable ? 2 : failed ? 1 : 0;
}

// The resolved traces of the input: one checked alone, several as a run.
int check_traces(const Flags& f, const std::vector<RunProcess>& traces, const CheckConfig& config,
                 const AnalysisOptions& options, SuppressionSet& suppressions,
                 const Baseline& baseline, const std::string& trace,
                 std::chrono::steady_clock::time_point started) {
  if (traces.size() == 1)
    return check_one(f, config, options, suppressions, baseline, traces.front().file, started);
  if (!config.baseline.empty() || !f.write_baseline.empty() || !f.junit.empty()) {
    std::fprintf(stderr,
                 "memtrail check: %s holds %zu traces; --baseline, --write-baseline and --junit "
                 "need one: choose it with --pid or --program\n",
                 trace.c_str(), traces.size());
    return 2;
  }
  return check_processes(f, traces, config, options, suppressions);
}

// A trace, or a run: each selected process checked, one exit code. A run
// whose traces are not all there (memtrail run named them missing) fails
// unless losses are accepted.
int check_input(const Flags& f, const CheckConfig& config, const AnalysisOptions& options,
                const ProcessSelection& selection, SuppressionSet& suppressions,
                const Baseline& baseline, const std::string& trace,
                std::chrono::steady_clock::time_point started) {
  auto traces = resolve_traces("check", trace, selection);
  if (!traces) return 2;
  int rc = check_traces(f, *traces, config, options, suppressions, baseline, trace, started);
  const std::vector<std::string> missing =
      selection.any() ? std::vector<std::string>{} : read_missing_traces(trace);
  if (missing.empty() || f.accept_lost_events) return rc;
  for (const std::string& m : missing)
    std::fprintf(stderr, "memtrail check: FAIL missing-traces: %s\n", m.c_str());
  std::fprintf(stderr, "memtrail check: the run is not whole (--accept-lost-events passes it)\n");
  return rc == 0 ? 1 : rc;
}

// Flags that cannot go together, said as a usage error.
void check_flag_combinations(Args& args, const Flags& f) {
  if (f.run && f.program.empty())
    args.fail("--run needs a program after '--'");
  else if (f.run && !f.trace.empty())
    args.fail("give either a trace file or --run, not both");
  else if (!f.run && f.trace.empty())
    args.fail("missing the trace file");
  else if (!f.run && !f.run_trace.empty())
    args.fail("--trace only goes with --run");
  else if (f.tolerance && f.baseline.empty() && f.policy.empty())
    args.fail("--tolerance needs --baseline");
}

// Reads check's flags into `f`, `selection` and `options`; false after
// --help (`*exit` 0) or a usage error (`*exit` 2, already said).
bool parse_check_flags(Args& args, Flags& f, ProcessSelection& selection, AnalysisOptions& options,
                       int* exit) {
  std::uint64_t top = 0;
  std::string v;
  while (!args.done()) {
    if (args.flag("--help") || args.flag("-h")) {
      print_usage();
      *exit = 0;
      return false;
    } else if (size_value(args, "--max-leaked", f.max_leaked) ||
               size_value(args, "--max-peak", f.max_peak) ||
               size_value(args, "--max-reserved", f.max_reserved) ||
               size_value(args, "--max-scope-growth", f.max_scope_growth)) {
    } else if (args.number("--max-leaked-blocks", top)) {
      f.max_leaked_blocks = top;
    } else if (take_num_callers(args, f.num_callers)) {
    } else if (args.number("--top", top)) {
      f.top = top;
    } else if (args.value("--tolerance", v)) {
      char* end = nullptr;
      double pct = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(pct >= 0))
        args.fail("--tolerance: '" + v + "' is not a percentage >= 0");
      f.tolerance = pct;
    } else if (args.value("--suppressions", v)) {
      f.suppression_files.push_back(v);
    } else if (args.flag("--no-default-suppressions")) {
      f.no_default_suppressions = true;
    } else if (args.value("--baseline", f.baseline) ||
               args.value("--write-baseline", f.write_baseline) || args.value("--junit", f.junit) ||
               args.value("--policy", f.policy) || args.value("--trace", f.run_trace)) {
    } else if (args.flag("--gen-suppressions")) {
      f.gen_suppressions = true;
    } else if (args.flag("--accept-lost-events")) {
      f.accept_lost_events = true;
    } else if (args.value("--show-leak-kinds", v)) {
      std::string why;
      f.leak_kinds = LeakKinds::parse(v, &why);
      if (!f.leak_kinds) args.fail("--show-leak-kinds: " + why);
    } else if (args.flag("--run")) {
      f.run = true;
    } else if (args.flag("--")) {
      while (!args.done()) f.program.push_back(args.take());
    } else if (take_analysis_option(args, options) || take_selection_option(args, selection)) {
    } else if (args.is_option()) {
      *exit = args.unknown();
      return false;
    } else if (f.run) {
      while (!args.done()) f.program.push_back(args.take());
    } else if (f.trace.empty()) {
      f.trace = args.take();
    } else {
      args.fail("more than one trace file ('" + f.trace + "' and '" + args.take() + "')");
    }
  }
  if (!args.failed()) check_flag_combinations(args, f);
  if (args.failed() || !check_analysis_options(args, options)) {
    *exit = args.usage_error();
    return false;
  }
  return true;
}

// The policy file first, then the flags on top of it; false (said) when the
// policy cannot be read.
bool config_from_flags(const Flags& f, AnalysisOptions& options, CheckConfig& config) {
  std::string error;
  if (!f.policy.empty() && !load_policy(f.policy, config, &error)) {
    std::fprintf(stderr, "memtrail check: %s\n", error.c_str());
    return false;
  }
  if (f.max_leaked) config.max_leaked_bytes = f.max_leaked;
  if (f.max_leaked_blocks) config.max_leaked_blocks = f.max_leaked_blocks;
  if (f.max_peak) config.max_peak_bytes = f.max_peak;
  if (f.max_reserved) config.max_reserved_bytes = f.max_reserved;
  if (f.max_scope_growth) config.max_scope_growth = f.max_scope_growth;
  if (f.tolerance) config.tolerance_percent = *f.tolerance;
  if (f.top) config.top_sites = *f.top;
  config.frames_per_site = f.num_callers;
  if (f.leak_kinds) config.leak_kinds = *f.leak_kinds;
  if (!f.baseline.empty()) config.baseline = f.baseline;
  if (f.no_default_suppressions) config.default_suppressions = false;
  if (f.accept_lost_events) config.accept_lost_events = true;
  config.suppression_files.insert(config.suppression_files.end(), f.suppression_files.begin(),
                                  f.suppression_files.end());
  if (!options.pools.empty()) config.pools = options.pools;  // --pool replaces the policy's
  options.pools = config.pools;
  return true;
}

}  // namespace

int cmd_check(int argc, char** argv) {
  Args args("check", argc, argv);
  Flags f;
  ProcessSelection selection;
  AnalysisOptions options;
  int exit = 0;
  if (!parse_check_flags(args, f, selection, options, &exit)) return exit;
  CheckConfig config;
  if (!config_from_flags(f, options, config)) return 2;

  std::string error;
  SuppressionSet suppressions;
  if (!build_suppressions(config, suppressions, &error)) {
    std::fprintf(stderr, "memtrail check: %s\n", error.c_str());
    return 2;
  }
  Baseline baseline;
  if (!config.baseline.empty() && !load_baseline(config.baseline, baseline, &error)) {
    std::fprintf(stderr, "memtrail check: %s\n", error.c_str());
    return 2;
  }

  auto started = std::chrono::steady_clock::now();
  std::string trace = f.trace;
  bool remove_trace = false;
  if (f.run) {
    trace = f.run_trace;
    if (trace.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      trace =
          std::string(tmp && *tmp ? tmp : "/tmp") + "/memtrail-check-" + std::to_string(getpid());
      remove_trace = true;
      options.symbol_cache = false;  // a temporary trace leaves no TRACE.symbols behind
    }
    int status = run_program(trace, f.program);
    if (!remove_trace && access(trace.c_str(), F_OK) == 0)
      std::fprintf(stderr, "memtrail: trace written to %s\n", trace.c_str());
    if (status != 0) {
      std::fprintf(stderr, "memtrail check: '%s' exited with status %d\n", f.program[0].c_str(),
                   status);
      if (remove_trace) clear_run_directory(trace, true, &error);
      return status == 2 || status == 127 ? 2 : 1;
    }
  }

  int rc = check_input(f, config, options, selection, suppressions, baseline, trace, started);
  if (remove_trace) clear_run_directory(trace, true, &error);
  return rc;
}

}  // namespace memtrail::cli
