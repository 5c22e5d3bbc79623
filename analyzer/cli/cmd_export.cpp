// memtrail export FILE --format json|chrome|folded|sqlite|pprof|charts [-o OUT]
#include <cstdio>
#include <fstream>
#include <iostream>

#include "cli_args.hpp"
#include "commands.hpp"
#include "memtrail/export.hpp"
#include "memtrail/report_json.hpp"
#include "memtrail/session.hpp"
#include "memtrail/site_charts.hpp"
#include "progress_line.hpp"
#include "run_input.hpp"

namespace memtrail::cli {

namespace {

const char* const kUsage =
    "usage: memtrail export FILE --format FORMAT [-o OUT] [--cost COST] [options]\n"
    "\n"
    "formats:\n"
    "  json     the full analysis (report schema with every site, timelines)\n"
    "  chrome   Trace Event JSON for ui.perfetto.dev: per-pool used/reserved\n"
    "           counters, process rss/heap, large-block slices, marks\n"
    "  folded   folded stacks for flamegraph.pl / speedscope\n"
    "  sqlite   an SQLite database (needs -o): pools, sites, frames, events...\n"
    "  pprof    gzip-compressed profile.proto (needs -o): alloc_objects,\n"
    "           alloc_space, inuse_objects, inuse_space\n"
    "  charts   JSON series over time of the top sites (--top, default 10) and\n"
    "           \"other\", by --cost consumed, allocations or temporary\n"
    "           (default consumed), in --points buckets (default 200)\n"
    "\n"
    "  -o, --output OUT    output file (default stdout for json/chrome/folded)\n"
    "  --cost COST         folded weight: allocations, bytes, leaked, peak,\n"
    "                      temporary (default bytes)\n"
    "  --top N             json: sites per top list and leak sites, and only the\n"
    "                      sites they name (default 0 = every site)\n" MEMTRAIL_SELECTION_HELP;

// --format charts: the session's pass ranks the sites, a second pass charts them.
int export_charts(const std::string& trace, const AnalysisOptions& options, ChartCost cost,
                  std::size_t top, std::size_t points, std::ostream& out) {
  SessionOptions so;
  so.analysis = options;
  OpenResult r = Session::open(trace, so);
  if (!r.session) {
    std::fprintf(stderr, "memtrail export: %s\n", r.message.c_str());
    return 2;
  }
  const Analysis& a = r.session->whole();
  SiteChartRequest request;
  request.cost = cost;
  request.t0 = a.range_from_ns;
  request.t1 = a.range_to_ns;
  request.top = top;
  request.buckets = points;
  SiteCharts c = r.session->site_charts(request, a);
  if (!c.error.empty()) {
    std::fprintf(stderr, "memtrail export: %s\n", c.error.c_str());
    return 2;
  }
  write_site_charts_json(c, a, out);
  return 0;
}

}  // namespace

int cmd_export(int argc, char** argv) {
  Args args("export", argc, argv);
  AnalysisOptions options;
  std::string format, output, cost_name;  // default: bytes, charts consumed
  std::uint64_t top = 0, points = 200;
  std::vector<std::string> files;
  ProcessSelection selection;
  auto own = [&](Args& a) {
    return take_selection_option(a, selection) || a.value("--format", format) ||
           a.value("-f", format) || a.value("-o", output) || a.value("--output", output) ||
           a.value("--cost", cost_name) || a.number("--top", top) || a.number("--points", points);
  };
  if (auto rc = parse_trace_command(args, kUsage, options, files, own)) return *rc;
  FoldedCost cost = FoldedCost::bytes;
  ChartCost chart_cost = ChartCost::consumed;
  const bool charts = format == "charts";
  if (cost_name.empty()) cost_name = charts ? "consumed" : "bytes";
  expect_one_trace(args, files);
  if (!args.failed() && format.empty())
    args.fail("missing --format (json, chrome, folded, sqlite, pprof or charts)");
  if (!args.failed() && format != "json" && format != "chrome" && format != "folded" &&
      format != "sqlite" && format != "pprof" && !charts)
    args.fail("unknown format '" + format +
              "' (use json, chrome, folded, sqlite, pprof or charts)");
  if (!args.failed() && charts && !parse_chart_cost(cost_name, chart_cost))
    args.fail("unknown --cost '" + cost_name + "' (charts: consumed, allocations or temporary)");
  if (!args.failed() && !charts && !parse_folded_cost(cost_name, cost))
    args.fail("unknown --cost '" + cost_name +
              "' (use allocations, bytes, leaked, peak or temporary)");
  if (!args.failed() && top != 0 && format != "json" && !charts)
    args.fail("--top applies to --format json and charts only");
  if (!args.failed() && charts && (top > 250 || points == 0 || points > 100000))
    args.fail("--format charts takes --top up to 250 and --points from 1 to 100000");
  if (!args.failed() && (format == "sqlite" || format == "pprof") &&
      (output.empty() || output == "-"))
    args.fail("--format " + format + " needs -o FILE");
  if (args.failed() || !check_analysis_options(args, options)) return args.usage_error();

  auto file = resolve_one_trace("export", files[0], selection);
  if (!file) return 2;
  if (charts) {
    std::ofstream chart_file;
    if (!output.empty() && output != "-") {
      chart_file.open(output, std::ios::binary | std::ios::trunc);
      if (!chart_file) {
        std::fprintf(stderr, "memtrail export: %s: cannot create\n", output.c_str());
        return 2;
      }
    }
    std::ostream& out = chart_file.is_open() ? static_cast<std::ostream&>(chart_file) : std::cout;
    return export_charts(*file, options, chart_cost, top ? top : 10, points, out);
  }
  Analysis a = analyze_with_progress("export", *file, options);
  if (int rc = report_input_status("export", a)) return rc;

  std::string error;
  if (format == "sqlite") {
    error = write_sqlite(a, output);
  } else if (format == "pprof") {
    error = write_pprof(a, output);
  } else {
    std::ofstream file;
    if (!output.empty() && output != "-") {
      file.open(output, std::ios::binary | std::ios::trunc);
      if (!file) {
        std::fprintf(stderr, "memtrail export: %s: cannot create\n", output.c_str());
        return 2;
      }
    }
    std::ostream& out = file.is_open() ? static_cast<std::ostream&>(file) : std::cout;
    if (format == "json")
      write_full_json(a, top, out);
    else if (format == "chrome")
      out << to_chrome_trace(a).dump() << "\n";
    else
      write_folded(a, cost, out);
    out.flush();
    if (!out) error = (output.empty() ? std::string("stdout") : output) + ": write failed";
  }
  if (!error.empty()) {
    std::fprintf(stderr, "memtrail export: %s\n", error.c_str());
    return 2;
  }
  return 0;
}

}  // namespace memtrail::cli
