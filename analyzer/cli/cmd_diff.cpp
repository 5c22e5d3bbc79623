// memtrail diff A B: what changed between two traces, per site and per pool.
#include <cstdio>
#include <iostream>

#include "cli_args.hpp"
#include "commands.hpp"
#include "memtrail/diff.hpp"
#include "memtrail/report_json.hpp"
#include "progress_line.hpp"
#include "run_input.hpp"

namespace memtrail::cli {

namespace {

const char* const kUsage =
    "usage: memtrail diff A B [--json] [--top N] [options]\n"
    "\n"
    "Per-site (matched by symbolized stack) and per-pool deltas of leaks,\n"
    "peak and calls from A to B, largest impact first. A and B are traces or\n"
    "runs of one process (or narrowed to one by --pid/--program, applied to\n"
    "both). The options apply to both.\n"
    "\n"
    "  --json              machine-readable diff (schema memtrail.diff/1)\n"
    "  --top N             sites listed (default 10; 0 = all)\n" MEMTRAIL_NUM_CALLERS_HELP
        MEMTRAIL_SELECTION_HELP;

}  // namespace

int cmd_diff(int argc, char** argv) {
  Args args("diff", argc, argv);
  AnalysisOptions options;
  bool json = false;
  std::uint64_t top = 10;
  std::uint64_t num_callers = kDefaultNumCallers;
  std::vector<std::string> files;
  ProcessSelection selection;
  auto own = [&](Args& a) {
    return take_selection_option(a, selection) || take_num_callers(a, num_callers) ||
           (a.flag("--json") ? (json = true) : a.number("--top", top));
  };
  if (auto rc = parse_trace_command(args, kUsage, options, files, own)) return *rc;
  if (!args.failed() && files.size() != 2)
    args.fail("expected two trace files A and B, got " + std::to_string(files.size()));
  if (args.failed() || !check_analysis_options(args, options)) return args.usage_error();

  auto file_a = resolve_one_trace("diff", files[0], selection);
  if (!file_a) return 2;
  auto file_b = resolve_one_trace("diff", files[1], selection);
  if (!file_b) return 2;
  Analysis a = analyze_with_progress("diff", *file_a, options);
  if (int rc = report_input_status("diff", a)) return rc;
  Analysis b = analyze_with_progress("diff", *file_b, options);
  if (int rc = report_input_status("diff", b)) return rc;
  DiffResult d = diff_analyses(a, b);
  if (json)
    std::cout << to_diff_json(d, top).dump(2) << "\n";
  else
    std::cout << "memtrail diff: A = " << files[0] << ", B = " << files[1] << "\n\n"
              << diff_text(d, top == 0 ? static_cast<std::size_t>(-1) : top, num_callers);
  return 0;
}

}  // namespace memtrail::cli
