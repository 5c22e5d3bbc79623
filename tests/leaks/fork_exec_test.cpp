// Issue 27 items 3 and 4: leak classes after fork and exec, per process, as
// Valgrind's --trace-children=yes gives them. Each program of
// tests/leaks/programs named below (built at -O0 and -O2, -g) runs under
// `memtrail run` into a run directory, 12 times, and under Valgrind, from
// two working directories of different path lengths with two environment
// sizes (run_places: heap and stack layout move with both). Within each
// tool processes are told apart by pid (Valgrind's ==PID== lines, the
// run directory's <pid>.<seq>.<program>.mtr traces, an exec'd image's
// traces summed into its pid's) and listed parent first (the child's pid is
// the larger: a test machine does not wrap pids within a run).
#include <gtest/gtest.h>

#include <algorithm>

#include <map>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include "leak_tools.hpp"

namespace memtrail::leaks {
namespace {

const std::string kMemtrail = MEMTRAIL_BIN;
const std::string kBinDir = LEAK_BIN_DIR;
constexpr int kRuns = 12;  // three in each of the four places

struct ForkExecProgram {
  const char* name;
  // Valgrind 3.19 --trace-children=yes, per process, parent first.
  std::vector<ValgrindCounts> expected;
  bool check_passes;  // `memtrail check` over the run directory
  // Blocks memtrail leaves unclassified because their image exec'd (the
  // report's exec_replaced), summed over the run.
  Amount exec_replaced = {};
};

const std::vector<ForkExecProgram>& programs() {
  static const std::vector<ForkExecProgram> list = {
      // (a) an inherited block held by a global: reachable in both processes.
      {"fork_global", {{{}, {}, {}, {1, 64}}, {{}, {}, {}, {1, 64}}}, true},
      // (b) 100 nodes hung on an inherited list: all reachable in the child.
      {"fork_list", {{{}, {}, {}, {3, 96}}, {{}, {}, {}, {103, 3296}}}, true},
      // (c) the child's three strings die with its image at the exec.
      {"exec_strdup", {{}, {}}, true, {3, 81}},
      // (d) the exec fails; the child keeps one block and leaks another. The
      // trace that ended at the exec shows the kept block unclassified; the
      // trace that goes on after it carries and classifies it.
      {"exec_fails", {{}, {{1, 100}, {}, {}, {1, 48}}}, false, {1, 48}},
  };
  return list;
}

using Param = std::tuple<std::size_t, std::string>;

class ForkExec : public testing::TestWithParam<Param> {
 protected:
  const ForkExecProgram& program() const { return programs()[std::get<0>(GetParam())]; }
  const std::string& opt() const { return std::get<1>(GetParam()); }
  std::string binary() const { return std::string("leak_") + program().name + "_" + opt(); }
  // run_places() for the program and for leak_exec_target_<opt>, which
  // exec_strdup's child execs from beside it: four places, or none when a
  // copy failed.
  std::vector<RunPlace> places(const std::string& base) const {
    std::vector<RunPlace> where = run_places(base, kBinDir, binary());
    if (run_places(base, kBinDir, "leak_exec_target_" + opt()).empty()) return {};
    return where;
  }
};

// The counts of one `memtrail report --json`.
MemtrailCounts counts_of(const nlohmann::json& leaks) {
  return {amount_of(leaks, "direct"), amount_of(leaks, "indirect"), amount_of(leaks, "possible"),
          amount_of(leaks, "reachable")};
}

MemtrailCounts operator+(const MemtrailCounts& a, const MemtrailCounts& b) {
  return {a.direct + b.direct, a.indirect + b.indirect, a.possible + b.possible,
          a.reachable + b.reachable};
}

struct TracedRun {
  std::map<int, MemtrailCounts> by_pid;
  std::map<int, int> parent_of;  // pid -> ppid, from each trace's header
  Amount exec_replaced;
  int check_exit = -1;
  std::string error;
};

// The parent's pid from the trace's header line ("header ... ppid=N ..."); -1 if unread.
int ppid_of(const std::string& trace) {
  CommandResult dump =
      run_command(shell_quote(kMemtrail) + " dump --limit 1 " + shell_quote(trace));
  std::size_t at = dump.out.find(" ppid=");
  return at == std::string::npos ? -1 : std::atoi(dump.out.c_str() + at + 6);
}

TracedRun traced_run(const RunPlace& place, const std::string& binary, const std::string& run_dir) {
  TracedRun r;
  CommandResult run =
      run_command("cd " + shell_quote(place.dir) + " && " + place.env + shell_quote(kMemtrail) +
                  " run -o " + shell_quote(run_dir + "/") + " -- ./" + binary);
  if (run.exit_code != 0) r.error = "the program failed: " + run.err;
  for (const std::string& name : names_in(run_dir)) {
    if (!name.ends_with(".mtr")) continue;
    CommandResult report = run_command(shell_quote(kMemtrail) + " report --json --top 0 " +
                                       "--no-symbols " + shell_quote(run_dir + "/" + name));
    nlohmann::json j = nlohmann::json::parse(report.out, nullptr, false);
    if (report.exit_code != 0 || j.is_discarded() || !j.contains("leaks")) {
      r.error += "no report of " + name + ": " + report.err;
      continue;
    }
    int pid = std::stoi(name.substr(0, name.find('.')));
    r.by_pid[pid] = r.by_pid[pid] + counts_of(j["leaks"]);
    r.parent_of[pid] = ppid_of(run_dir + "/" + name);
    r.exec_replaced = r.exec_replaced + amount_of(j["leaks"], "exec_replaced");
  }
  r.check_exit = run_command(shell_quote(kMemtrail) + " check " + shell_quote(run_dir)).exit_code;
  run_command("rm -rf " + shell_quote(run_dir));
  return r;
}

// Parent first: by the number of traced ancestors, then by pid. Not by pid
// alone: under load pids wrap (pid_max 32768) and a child can get a smaller
// pid than its parent (exec_fails read the two processes swapped in 1 of 3
// suite runs).
std::vector<MemtrailCounts> parent_first(const TracedRun& r) {
  auto depth = [&](int pid) {
    int d = 0;
    for (auto it = r.parent_of.find(pid); it != r.parent_of.end() && d < 64;
         it = r.parent_of.find(it->second))
      ++d;
    return d;
  };
  std::vector<std::pair<int, int>> order;  // depth, pid
  for (const auto& [pid, counts] : r.by_pid) order.push_back({depth(pid), pid});
  std::sort(order.begin(), order.end());
  std::vector<MemtrailCounts> out;
  for (const auto& [d, pid] : order) out.push_back(r.by_pid.at(pid));
  return out;
}

TEST_P(ForkExec, MemtrailGivesValgrindsClassesPerProcess) {
  std::vector<MemtrailCounts> expected;
  for (const ValgrindCounts& v : program().expected) expected.push_back(MemtrailCounts::from(v));
  TempDir traces("forkexec-trace"), place_dirs("forkexec-place");
  ASSERT_FALSE(traces.path().empty());
  const std::vector<RunPlace> where = places(place_dirs.path());
  ASSERT_FALSE(where.empty());
  for (int i = 0; i < kRuns; ++i) {
    // Every run moves the working directory's length or the environment's size.
    const RunPlace& place = where[i % where.size()];
    SCOPED_TRACE("run " + std::to_string(i + 1) + " of " + binary() + " (" + place.label + ")");
    TracedRun r = traced_run(place, binary(), traces.path() + "/run");
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(parent_first(r), expected);
    EXPECT_EQ(r.exec_replaced, program().exec_replaced);
    EXPECT_EQ(r.check_exit == 0, program().check_passes) << "memtrail check exit " << r.check_exit;
  }
}

// Valgrind's own answer, per ==PID==, parent first: in the order the pids
// first speak (the parent's banner comes before it forks), not by number — a
// pid wraparound gave a child a lower pid than its parent once.
std::vector<ValgrindCounts> valgrind_by_pid(const std::string& err) {
  std::map<int, std::string> lines;
  std::vector<int> order;
  std::regex prefix(R"(^==([0-9]+)== ?(.*)$)");
  std::smatch m;
  std::size_t at = 0;
  while (at < err.size()) {
    std::size_t end = err.find('\n', at);
    if (end == std::string::npos) end = err.size();
    std::string line = err.substr(at, end - at);
    if (std::regex_match(line, m, prefix)) {
      const int pid = std::stoi(m[1].str());
      if (!lines.count(pid)) order.push_back(pid);
      lines[pid] += m[2].str() + "\n";
    }
    at = end + 1;
  }
  std::vector<ValgrindCounts> out;
  for (int pid : order) {
    const std::string& text = lines[pid];
    if (test::contains(text, "All heap blocks were freed")) {
      out.push_back({});
      continue;
    }
    out.push_back({valgrind_amount(text, "definitely lost"),
                   valgrind_amount(text, "indirectly lost"), valgrind_amount(text, "possibly lost"),
                   valgrind_amount(text, "still reachable")});
  }
  return out;
}

// In each of the four places the memtrail runs take turns in.
TEST_P(ForkExec, ValgrindAgreesWithTheExpectedClasses) {
  if (!installed("valgrind")) GTEST_SKIP() << "valgrind is not installed";
  TempDir place_dirs("forkexec-place");
  const std::vector<RunPlace> where = places(place_dirs.path());
  ASSERT_FALSE(where.empty());
  for (const RunPlace& place : where) {
    SCOPED_TRACE(place.label);
    CommandResult run = run_command("cd " + shell_quote(place.dir) + " && " + place.env +
                                    "valgrind --vgdb=no --trace-children=yes --leak-check=full "
                                    "--show-leak-kinds=all --errors-for-leak-kinds=none ./" +
                                    binary());
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(valgrind_by_pid(run.err), program().expected) << run.err;
  }
}

std::string case_name(const testing::TestParamInfo<Param>& info) {
  return std::string(programs()[std::get<0>(info.param)].name) + "_" + std::get<1>(info.param);
}

INSTANTIATE_TEST_SUITE_P(Programs, ForkExec,
                         testing::Combine(testing::Range<std::size_t>(0, programs().size()),
                                          testing::Values("O0", "O2")),
                         case_name);

}  // namespace
}  // namespace memtrail::leaks
