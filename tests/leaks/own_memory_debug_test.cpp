// MEMTRAIL_MEMORY_DEBUG=1 (docs/tracing.md): at the session's end the tracer
// prints its own mappings by purpose, MiB mapped and resident at the
// process's peak RSS, the most seen and at the end; how the tracer's share
// of a program's RSS is parted where smaps cannot tell its anonymous
// mappings from the program's (docs/BENCHMARKS.md, "Floor: tracer memory").
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "leak_tools.hpp"

namespace memtrail::leaks {
namespace {

const std::string kMemtrail = MEMTRAIL_BIN;
const std::string kBinDir = LEAK_BIN_DIR;

// 64 threads, each allocating: every purpose but "other" has memory.
std::string stderr_of_threads(const std::string& env) {
  TempDir traces("memory-debug");
  CommandResult r = run_command("cd " + shell_quote(kBinDir) + " && " + env + " timeout 60 " +
                                shell_quote(kMemtrail) + " run -q -o " +
                                shell_quote(traces.path() + "/run") + " -- ./leak_threads64_O2");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.err;
}

struct Row {
  double peak_mapped, peak_resident, most_mapped, most_resident, end_mapped, end_resident;
};

// The table's rows by purpose; "peak RSS" is the process's, from the title.
std::map<std::string, Row> rows_of(const std::string& err, double* peak_rss) {
  std::map<std::string, Row> rows;
  std::smatch title;
  if (std::regex_search(err, title, std::regex(R"(at the process's peak RSS \(([0-9.]+) MiB\))")))
    *peak_rss = std::stod(title[1]);
  std::regex row(
      R"(memtrail: ([a-z ]+?) +([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9.]+)\n)");
  for (std::sregex_iterator it(err.begin(), err.end(), row), end; it != end; ++it) {
    const std::smatch& m = *it;
    rows[m[1]] = Row{std::stod(m[2]), std::stod(m[3]), std::stod(m[4]),
                     std::stod(m[5]), std::stod(m[6]), std::stod(m[7])};
  }
  return rows;
}

TEST(OwnMemoryDebug, PartsTheTracersMappingsByPurpose) {
  std::string err = stderr_of_threads("MEMTRAIL_MEMORY_DEBUG=1");
  EXPECT_EQ(err.find("unknown environment variable"), std::string::npos) << err;
  double peak_rss = 0;
  std::map<std::string, Row> rows = rows_of(err, &peak_rss);
  for (const char* purpose : {"heap chunks", "heap large", "heap cached", "event blocks",
                              "thread state", "stack trie", "addr tables", "other"})
    EXPECT_EQ(rows.count(purpose), 1u) << purpose << "\n" << err;
  // Each thread wrote events into 128 KiB blocks and had its tables, and
  // the writer's own heap and stack trie were mapped (64 threads' live
  // blocks fit the address table's first pages: 0.0 MiB).
  for (const char* purpose : {"heap chunks", "event blocks", "thread state", "stack trie"})
    EXPECT_GT(rows[purpose].most_mapped, 0.0) << purpose << "\n" << err;
  EXPECT_GT(rows["event blocks"].most_resident, 0.0) << err;
  // Each column's total is its purposes' sum (rounded to 0.1 MiB each).
  ASSERT_EQ(rows.count("total"), 1u) << err;
  Row sum{};
  for (const auto& [purpose, r] : rows) {
    if (purpose == "total") continue;
    EXPECT_LE(r.peak_resident, r.peak_mapped + 0.05) << purpose;
    EXPECT_LE(r.most_resident, r.most_mapped + 0.05) << purpose;
    sum.peak_resident += r.peak_resident;
    sum.most_resident += r.most_resident;
    sum.end_resident += r.end_resident;
  }
  EXPECT_NEAR(rows["total"].peak_resident, sum.peak_resident, 0.5) << err;
  EXPECT_NEAR(rows["total"].most_resident, sum.most_resident, 0.5) << err;
  EXPECT_NEAR(rows["total"].end_resident, sum.end_resident, 0.5) << err;
  // Part of the process's RSS, never more than it.
  EXPECT_GT(peak_rss, 0.0) << err;
  EXPECT_LE(rows["total"].peak_resident, peak_rss) << err;
}

// "resident at the exit scan, MiB: heap chunks 1.23, ..., total 4.56".
std::map<std::string, double> scan_line_of(const std::string& err) {
  std::map<std::string, double> parts;
  std::smatch line;
  if (!std::regex_search(err, line, std::regex(R"(resident at the exit scan, MiB:([^\n]*))")))
    return parts;
  const std::string text = line[1];
  std::regex part(R"( ([a-z ]+?) ([0-9.]+),?)");
  for (std::sregex_iterator it(text.begin(), text.end(), part), end; it != end; ++it)
    parts[(*it)[1]] = std::stod((*it)[2]);
  return parts;
}

// The exit scan is where a program's RSS peaks under the tracer (it holds
// a record per live block): what the writer builds chunks in and the event
// blocks kept warm for reuse go back before the scan takes its scratch,
// so the two do not add up (issue 28). The program made ~600,000 events
// in one thread: a writer's chunk of 1 MiB (the streams, their copy for
// zstd, its output and workspace: ~3 MiB of large blocks) and dozens of
// event blocks cycled; 2,000 blocks live at exit make the scan's own
// records small (~80 KiB, in the small-block chunks).
TEST(OwnMemoryDebug, ExitScanHoldsNoWriterScratchNorWarmEventBlocks) {
  TempDir traces("memory-debug-scan");
  CommandResult r = run_command("cd " + shell_quote(kBinDir) + " && MEMTRAIL_MEMORY_DEBUG=1 " +
                                "timeout 60 " + shell_quote(kMemtrail) + " run -q -o " +
                                shell_quote(traces.path() + "/run") + " -- ./leak_event_churn_O2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, double> scan = scan_line_of(r.err);
  ASSERT_EQ(scan.count("total"), 1u) << r.err;
  // The one thread's block being written (128 KiB) and the first page of
  // each block given back; not the eight warm ones (1 MiB).
  EXPECT_LT(scan["event blocks"], 0.5) << r.err;
  // Nothing of the writer's chunk; the scan's own large blocks are none.
  EXPECT_LT(scan["heap large"], 0.5) << r.err;
}

TEST(OwnMemoryDebug, SilentByDefault) {
  EXPECT_EQ(stderr_of_threads("").find("own mappings"), std::string::npos);
  EXPECT_EQ(stderr_of_threads("MEMTRAIL_MEMORY_DEBUG=0").find("own mappings"), std::string::npos);
}

}  // namespace
}  // namespace memtrail::leaks
