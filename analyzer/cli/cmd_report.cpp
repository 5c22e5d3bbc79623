// memtrail report FILE: the analysis as text, or as `memtrail.report/1` JSON.
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli_args.hpp"
#include "commands.hpp"
#include "memtrail/analysis.hpp"
#include "memtrail/report_json.hpp"
#include "memtrail/report_text.hpp"
#include "memtrail/run_index.hpp"
#include "memtrail/site_filter.hpp"
#include "progress_line.hpp"
#include "report_at.hpp"
#include "run_input.hpp"
#include "run_report.hpp"

namespace memtrail::cli {

namespace {

const char* const kUsage =
    "usage: memtrail report TRACE [--json] [--top N] [options]\n"
    "\n"
    "Summary, leaks by class with stacks, top sites, pools, scopes and\n"
    "histograms of a .mtr trace or a run of one process. A run of several\n"
    "processes gets one line per process and each one's leaks.\n"
    "\n"
    "  --json              machine-readable report (schema memtrail.report/1;\n"
    "                      memtrail.run-report/1 for several processes)\n"
    "  --top N             sites per list (default 10; 0 = all)\n"
    "  --show-leak-kinds K,...  leak sites listed: definite, indirect, possible,\n"
    "                      reachable, all, none (default definite,indirect,possible;\n"
    "                      JSON: all)\n" MEMTRAIL_NUM_CALLERS_HELP
    "  --filter-function NAME  only sites whose backtrace has a function\n"
    "                      containing NAME (peaks, timelines, pools: all)\n"
    "  --at TIME           reserved/used per pool (cached free, fragmented) and\n"
    "                      each segment map's summary at that moment "
    "instead\n" MEMTRAIL_SELECTION_HELP;

}  // namespace

int cmd_report(int argc, char** argv) {
  Args args("report", argc, argv);
  AnalysisOptions options;
  bool json = false;
  std::uint64_t top = 10;
  std::uint64_t num_callers = kDefaultNumCallers;
  std::optional<std::string> filter;
  std::vector<std::string> files;
  ProcessSelection selection;
  std::optional<std::uint64_t> at;
  std::optional<LeakKinds> leak_kinds;
  auto own = [&](Args& a) {
    std::string v;
    if (a.value("--show-leak-kinds", v)) {
      std::string why;
      leak_kinds = LeakKinds::parse(v, &why);
      if (!leak_kinds) a.fail("--show-leak-kinds: " + why);
      return true;
    }
    if (a.value("--at", v)) {
      std::string why;
      at = parse_duration_ns(v, &why);
      if (!at) a.fail("--at " + why);
      return true;
    }
    if (a.value("--filter-function", v)) {
      if (v.empty()) a.fail("--filter-function needs a function name");
      filter = v;
      return true;
    }
    return take_selection_option(a, selection) || take_num_callers(a, num_callers) ||
           (a.flag("--json") ? (json = true) : a.number("--top", top));
  };
  if (auto rc = parse_trace_command(args, kUsage, options, files, own)) return *rc;
  expect_one_trace(args, files);
  if (args.failed() || !check_analysis_options(args, options)) return args.usage_error();

  auto traces = resolve_traces("report", files[0], selection);
  if (!traces) return 2;
  if (at && traces->size() > 1) {
    std::fprintf(stderr, "memtrail report: --at reads one trace; pick a process of the run\n");
    return 2;
  }
  if (filter && (at || traces->size() > 1)) {
    std::fprintf(stderr,
                 "memtrail report: --filter-function reads one trace's sites, not --at or "
                 "a run of several processes\n");
    return 2;
  }
  if (at) return report_at(traces->front().file, options, *at, json);
  if (traces->size() > 1) return report_run(files[0], *traces, options, json, top);
  Analysis a = analyze_with_progress("report", traces->front().file, options);
  if (int rc = report_input_status("report", a)) return rc;
  // A run of one trace whose other traces are missing (a child that could
  // not be traced) says so as a run of several does.
  const std::vector<std::string> missing =
      selection.any() ? std::vector<std::string>{} : read_missing_traces(files[0]);
  std::size_t all_sites = a.sites.size(), kept = filter ? keep_sites_with_function(a, *filter) : 0;
  if (filter)
    std::fprintf(stderr,
                 "memtrail report: note: --filter-function '%s' keeps %zu of %zu sites; peaks, "
                 "timelines and pools are the whole process's\n",
                 filter->c_str(), kept, all_sites);
  if (json) {
    if (leak_kinds) keep_leak_kinds(a.leaks, *leak_kinds);
    nlohmann::json extra = nlohmann::json::object();
    if (filter)
      extra["filter"] = {{"function", *filter}, {"sites_kept", kept}, {"sites_total", all_sites}};
    if (!missing.empty()) extra["missing_traces"] = missing;
    write_report_json(std::cout, a, top, extra);  // streamed: bounded memory at any --top
    std::cout << "\n";
  } else {
    TextReportOptions t;
    t.top = top == 0 ? static_cast<std::size_t>(-1) : top;
    t.stack_depth = num_callers;
    if (leak_kinds) t.leak_kinds = *leak_kinds;
    std::cout << report_text(a, t);
    if (!missing.empty()) std::cout << "\nMISSING TRACES (the run is not whole)\n";
    for (const std::string& m : missing) std::cout << "  " << m << "\n";
  }
  return finish_stdout_report("report");
}

}  // namespace memtrail::cli
