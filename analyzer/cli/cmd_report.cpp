// memtrail report FILE: the analysis as text, or as `memtrail.report/1` JSON.
#include <cstdio>
#include <iostream>

#include "cli_args.hpp"
#include "commands.hpp"
#include "memtrail/analysis.hpp"
#include "memtrail/report_text.hpp"

namespace memtrail::cli {

namespace {

const char* const kUsage =
    "usage: memtrail report FILE [--json] [--top N] [options]\n"
    "\n"
    "Summary, leaks by class with stacks, top sites, pools, scopes and\n"
    "histograms of a .mtr trace.\n"
    "\n"
    "  --json              machine-readable report (schema memtrail.report/1)\n"
    "  --top N             sites per list (default 10; 0 = all)\n";

}  // namespace

int cmd_report(int argc, char** argv) {
  Args args("report", argc, argv);
  AnalysisOptions options;
  bool json = false;
  std::uint64_t top = 10;
  std::vector<std::string> files;
  auto own = [&](Args& a) { return a.flag("--json") ? (json = true) : a.number("--top", top); };
  if (auto rc = parse_trace_command(args, kUsage, options, files, own)) return *rc;
  expect_one_trace(args, files);
  if (args.failed() || !check_analysis_options(args, options)) return args.usage_error();

  Analysis a = analyze(files[0], options);
  if (int rc = report_input_status("report", a)) return rc;
  if (json) {
    std::cout << to_report_json(a, top).dump(2) << "\n";
  } else {
    TextReportOptions t;
    t.top = top == 0 ? static_cast<std::size_t>(-1) : top;
    std::cout << report_text(a, t);
  }
  std::cout.flush();
  if (!std::cout) {
    std::fprintf(stderr, "memtrail report: cannot write the report to stdout\n");
    return 2;
  }
  return 0;
}

}  // namespace memtrail::cli
