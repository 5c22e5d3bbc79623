// The process-tree report of a run (run_report.hpp).
#include "run_report.hpp"

#include <cinttypes>
#include <cstdio>
#include <iostream>

#include "cli_args.hpp"
#include "memtrail/report_json.hpp"
#include "memtrail/report_text.hpp"
#include "memtrail/size.hpp"
#include "run_input.hpp"

namespace memtrail::cli {
namespace {

std::string line(const char* format, auto... args) {
  char buf[1024];
  std::snprintf(buf, sizeof buf, format, args...);
  return buf;
}

// The leak sites of one process, as `report` prints them for one trace.
std::string leak_section(const RunProcess& p, const Analysis& a, std::uint64_t top) {
  const Leaks& l = a.leaks;
  std::string out =
      line("\nLEAKS of %s: direct %s in %" PRIu64 " blocks, indirect %s in %" PRIu64
           " blocks\n  command: %s\n",
           describe_process(p).c_str(), format_size(l.direct.bytes).c_str(), l.direct.blocks,
           format_size(l.indirect.bytes).c_str(), l.indirect.blocks, p.command_line.c_str());
  std::uint64_t shown = 0;
  for (const LeakSite& ls : l.sites) {
    if (ls.kind == LeakClass::reachable) continue;
    if (top != 0 && shown++ >= top) break;
    out += line("\n  %s leak: %s in %" PRIu64 " blocks\n", std::string(to_string(ls.kind)).c_str(),
                format_size(ls.tally.bytes).c_str(), ls.tally.blocks);
    out += format_stack(at(a.sites, ls.site).frames, 12, "    ");
  }
  return out;
}

}  // namespace

int report_run(const std::string& name, const std::vector<RunProcess>& processes,
               const AnalysisOptions& options, bool json, std::uint64_t top) {
  int rc = 0;
  std::string table =
      line("memtrail report: run %s, %zu traces\n\n", name.c_str(), processes.size()) +
      line("%8s %8s %4s %-16s %12s %12s %12s %8s\n", "PID", "PPID", "EXEC", "PROGRAM", "EVENTS",
           "PEAK", "LEAKED", "BLOCKS");
  std::string leaks;
  nlohmann::json list = nlohmann::json::array();
  for (const RunProcess& p : processes) {
    nlohmann::json entry = {{"pid", p.pid},         {"ppid", p.ppid}, {"exec", p.sequence},
                            {"program", p.program}, {"file", p.name}, {"command", p.command_line}};
    Analysis a = analyze(p.file, options);
    std::string error = !p.header_error.empty() ? p.header_error : a.error;
    if (!error.empty()) {
      rc = 2;
      std::fprintf(stderr, "memtrail report: %s\n", error.c_str());
      table += line("%8u %8u %4u %-16s  unreadable: %s\n", p.pid, p.ppid, p.sequence,
                    p.program.c_str(), error.c_str());
      entry["error"] = error;
      list.push_back(std::move(entry));
      continue;
    }
    if (!a.warning.empty())
      std::fprintf(stderr, "memtrail report: warning: %s: %s\n", p.name.c_str(), a.warning.c_str());
    const Summary& s = a.summary;
    table += line("%8u %8u %4u %-16s %12" PRIu64 " %12s %12s %8" PRIu64 "\n", p.pid, p.ppid,
                  p.sequence, p.program.c_str(), s.events, format_size(s.peak_used_bytes).c_str(),
                  format_size(s.leaked.bytes).c_str(), s.leaked.blocks);
    if (s.leaked.blocks > 0) leaks += leak_section(p, a, top);
    if (json) entry["report"] = to_report_json(a, top == 0 ? static_cast<std::size_t>(-1) : top);
    list.push_back(std::move(entry));
  }
  // Traces the run could not write (memtrail run named them too).
  const std::vector<std::string> missing = read_missing_traces(name);
  if (json) {
    nlohmann::json doc = {{"schema", "memtrail.run-report/1"}, {"run", name}, {"processes", list}};
    if (!missing.empty()) doc["missing_traces"] = missing;
    std::cout << doc.dump(2) << "\n";
  } else {
    std::cout << table;
    if (!missing.empty()) std::cout << "\nMISSING TRACES (the run is not whole)\n";
    for (const std::string& m : missing) std::cout << "  " << m << "\n";
    std::cout << leaks;
  }
  return finish_stdout_report("report", rc);
}

}  // namespace memtrail::cli
