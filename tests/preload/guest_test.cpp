// The tracer is a guest (issue 26): programs of shapes that hung or broke
// under `memtrail run` behave as untraced. Each program runs untraced and
// traced, each under a timeout (a hang fails the test rather than the run),
// and must exit alike with the same stdout; its traces must read back.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_command.hpp"
#include "run_dir.hpp"
#include "temp_dir.hpp"
#include "toolchains.hpp"

namespace {

using memtrail::test::CommandResult;
using memtrail::test::go_build_offline;
using memtrail::test::have_tool;
using memtrail::test::run_command;
using memtrail::test::run_traces;
using memtrail::test::shell_quote;

const std::string kMemtrail = MEMTRAIL_BIN;
const std::string kSources = GUEST_SOURCES;  // tests/preload/guest
constexpr int kTimeoutS = 120;
constexpr int kHung = 124;  // timeout(1)'s exit code

struct TempDir : memtrail::test::TempDir {
  TempDir() : memtrail::test::TempDir("guest") {}
};

std::string with_timeout(const std::string& command) {
  return "timeout -k 5 " + std::to_string(kTimeoutS) + " " + command;
}

// `command` untraced, then traced into `dir`/t: the traced run's result.
// Fails the test when either hangs or they differ in exit code or stdout.
CommandResult expect_same_traced(const TempDir& dir, const std::string& command) {
  CommandResult plain = run_command(with_timeout(command));
  EXPECT_NE(plain.exit_code, kHung) << "untraced run hung: " << command;
  CommandResult traced =
      run_command(with_timeout(kMemtrail + " run -o " + shell_quote(dir / "t") + " -- " + command));
  EXPECT_NE(traced.exit_code, kHung) << "traced run hung: " << command << "\n" << traced.err;
  EXPECT_EQ(traced.exit_code, plain.exit_code) << traced.err;
  EXPECT_EQ(traced.out, plain.out) << traced.err;
  return traced;
}

// Every trace of the run reads back: `memtrail report` on each exits 0
// (`partial`: a trace the run said was cut is read up to its cut).
void expect_traces_read_back(const TempDir& dir, bool partial = false) {
  auto traces = run_traces(dir / "t");
  EXPECT_FALSE(traces.empty()) << "no trace in " << dir / "t";
  for (const auto& trace : traces) {
    CommandResult r =
        run_command(kMemtrail + " report " + (partial ? "--partial " : "") + shell_quote(trace));
    EXPECT_EQ(r.exit_code, 0) << trace << "\n" << r.err;
  }
}

// `memtrail report --json` of each trace of the run: its summary, and
// whether the report warned (a trace cut short, a checksum failure).
struct TraceSummary {
  std::string path;
  nlohmann::json summary;
  bool warned = false;
};

std::vector<TraceSummary> trace_summaries(const TempDir& dir) {
  std::vector<TraceSummary> out;
  for (const auto& trace : run_traces(dir / "t")) {
    CommandResult r = run_command(kMemtrail + " report --json " + shell_quote(trace));
    EXPECT_EQ(r.exit_code, 0) << trace << "\n" << r.err;
    if (r.exit_code != 0) continue;
    out.push_back({trace, nlohmann::json::parse(r.out)["summary"],
                   r.err.find("warning") != std::string::npos});
  }
  return out;
}

// ---- item 1: pthread_getattr_np on itself as a thread's first event -------

TEST(GuestStartup, ThreadsWhoseFirstCallIsPthreadGetattrOnThemselves) {
  TempDir dir;
  CommandResult traced = expect_same_traced(dir, GETATTR_FIRST_BIN);
  EXPECT_NE(traced.out.find("main: pthread_getattr_np ok, stack holds its frame: yes"),
            std::string::npos)
      << traced.out;
  EXPECT_NE(traced.out.find("thread: pthread_getattr_np ok, stack holds its frame: yes"),
            std::string::npos)
      << traced.out;
  expect_traces_read_back(dir);
  // Both threads hold a block only from their stacks at exit: reachable, not
  // leaked, only when the tracer learnt where both stacks are.
  auto traces = run_traces(dir / "t");
  ASSERT_EQ(traces.size(), 1u);
  CommandResult json = run_command(kMemtrail + " report --json " + shell_quote(traces[0]));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  auto report = nlohmann::json::parse(json.out);
  EXPECT_EQ(report["summary"]["leaked_blocks"], 0) << json.out;
}

TEST(GuestStartup, RustHelloWorld) {
  if (!have_tool("rustc")) GTEST_SKIP() << "rustc not installed (Debian package rustc)";
  TempDir dir;
  auto build = run_command("rustc -O -o " + shell_quote(dir / "hello") + " " +
                           shell_quote(kSources + "/hello.rs"));
  ASSERT_EQ(build.exit_code, 0) << build.err;
  expect_same_traced(dir, shell_quote(dir / "hello"));
  expect_traces_read_back(dir);
}

TEST(GuestStartup, JavaHelloWorld) {
  if (!have_tool("javac") || !have_tool("java"))
    GTEST_SKIP() << "javac/java not installed (Debian package default-jdk-headless)";
  TempDir dir;
  auto build = run_command("javac -d " + shell_quote(dir / "classes") + " " +
                           shell_quote(kSources + "/Hello.java"));
  ASSERT_EQ(build.exit_code, 0) << build.err;
  expect_same_traced(dir, "java -cp " + shell_quote(dir / "classes") + " Hello");
  expect_traces_read_back(dir);
}

TEST(GuestStartup, GoProgramWithCgoMallocs) {
  if (!have_tool("go") || !have_tool("gcc"))
    GTEST_SKIP() << "go/gcc not installed (Debian packages golang-go, gcc)";
  TempDir dir;
  auto build = go_build_offline(dir.path(), kSources + "/cgo_mallocs.go", dir / "cgo_mallocs");
  ASSERT_EQ(build.exit_code, 0) << build.err;
  expect_same_traced(dir, shell_quote(dir / "cgo_mallocs"));
  expect_traces_read_back(dir);
}

// ---- item 2: a fork that runs no fork handlers ----------------------------

constexpr int kParentAllocations = 1002;  // raw_fork.c: kept, 1000 churned, stdout's buffer
constexpr int kChildAllocations = 20002;  // 20000 churned, `left`, stdout's buffer

void expect_parent_trace_whole(const TraceSummary& t) {
  EXPECT_FALSE(t.warned) << t.path;
  EXPECT_EQ(t.summary["allocations"], kParentAllocations) << t.path;
  EXPECT_EQ(t.summary["unmatched_frees"], 0) << t.path;
}

class GuestFork : public ::testing::TestWithParam<const char*> {};

// _Fork(): the recorder's own handlers run around it, and the child gets a
// trace of its own, as after fork().
TEST_P(GuestFork, UnderscoreForkChildHasATraceOfItsOwn) {
  TempDir dir;
  expect_same_traced(dir, std::string(RAW_FORK_BIN) + " _Fork " + GetParam());
  auto traces = trace_summaries(dir);
  ASSERT_EQ(traces.size(), 2u);
  // Files are PID.SEQ.PROGRAM.mtr; the parent is the one with the 1002 blocks.
  int parent = traces[0].summary["allocations"] == kParentAllocations ? 0 : 1;
  expect_parent_trace_whole(traces[parent]);
  const TraceSummary& child = traces[1 - parent];
  EXPECT_FALSE(child.warned) << child.path;
  EXPECT_EQ(child.summary["allocations"], kChildAllocations) << child.path;
  EXPECT_EQ(child.summary["unmatched_frees"], 0) << child.path;
}

// The fork system call: nothing runs in the parent; the child finds out
// (its pid is not the trace's), stops tracing and says so, and neither
// waits for the parent's writer thread nor writes into the parent's file.
TEST_P(GuestFork, SyscallForkChildRunsUntracedAndSaysSo) {
  TempDir dir;
  CommandResult traced =
      expect_same_traced(dir, std::string(RAW_FORK_BIN) + " syscall " + GetParam());
  EXPECT_NE(traced.err.find("was forked without fork handlers"), std::string::npos) << traced.err;
  auto traces = trace_summaries(dir);
  ASSERT_EQ(traces.size(), 1u);
  expect_parent_trace_whole(traces[0]);
}

INSTANTIATE_TEST_SUITE_P(ChildEnds, GuestFork, ::testing::Values("exit", "_exit"),
                         [](const auto& info) {
                           return std::string(info.param[0] == '_' ? "UnderscoreExit" : "Exit");
                         });

// ---- item 12: moving reallocs of eight threads in one arena ---------------

// The old block's free must be recorded before another thread's alloc of
// its address: 10 runs, none with an unmatched free or a replaced block
// (each run had a few to thousands before).
TEST(GuestRealloc, MovingReallocsOfEightThreadsInOneArenaMatchEveryFree) {
  CommandResult plain = run_command(with_timeout(REALLOC_RACE_BIN));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  for (int run = 0; run < 10; ++run) {
    TempDir dir;
    CommandResult traced = run_command(
        with_timeout(kMemtrail + " run -o " + shell_quote(dir / "t") + " -- " + REALLOC_RACE_BIN));
    ASSERT_EQ(traced.exit_code, 0) << traced.err;
    EXPECT_EQ(traced.out, plain.out);
    auto traces = trace_summaries(dir);
    ASSERT_EQ(traces.size(), 1u);
    EXPECT_EQ(traces[0].summary["unmatched_frees"], 0) << "run " << run;
    EXPECT_EQ(traces[0].summary["replaced_blocks"], 0) << "run " << run;
    EXPECT_EQ(traces[0].summary["leaked_blocks"], 0)
        << "run " << run;  // the failed realloc's block
  }
}

// ---- item 5: limits the program runs under -------------------------------

// An address-space limit that leaves no room for the tracer's threads (or
// its buffers): the program runs on as untraced, and `memtrail run` says
// why (a trace missing when an image's tracing could not start at all). Several limits, since which
// of the tracer's needs fails first depends on the machine's libraries; those the program itself
// cannot run under are skipped.
TEST(GuestLimits, AddressSpaceLimitsTheProgramRunsUnder) {
  int tried = 0;
  for (int kib : {12000, 16000, 20000, 24000, 32000}) {
    // The shell is traced before it sets the limit; the program, its fork
    // child, starts tracing under it.
    std::string command = "sh -c " + shell_quote("ulimit -v " + std::to_string(kib) + " && " +
                                                 std::string(LIMITS_BIN) + " plain");
    if (run_command(with_timeout(command)).exit_code != 0) continue;  // too small for it alone
    ++tried;
    TempDir dir;
    SCOPED_TRACE("ulimit -v " + std::to_string(kib));
    CommandResult plain = run_command(with_timeout(command));
    CommandResult traced = run_command(
        with_timeout(kMemtrail + " run -o " + shell_quote(dir / "t") + " -- " + command));
    EXPECT_EQ(traced.out, plain.out) << traced.err;
    // The program's fork child execs it under the limit: when that image's
    // tracing cannot start, its trace is missing, and run says so (exit 2)
    // beside the tracer's own reason; otherwise the exit is the program's.
    const bool could_not_start = traced.err.find("tracing could not start") != std::string::npos;
    const bool said_missing =
        traced.err.find("is not whole: missing: the trace of pid ") != std::string::npos;
    if (could_not_start && said_missing)
      EXPECT_EQ(traced.exit_code, 2) << traced.err;
    else
      EXPECT_EQ(traced.exit_code, plain.exit_code) << traced.err;
    EXPECT_TRUE(traced.err.find("memtrail: trace written") != std::string::npos || said_missing)
        << traced.err;
    expect_traces_read_back(dir, true);
  }
  if (tried == 0) GTEST_SKIP() << "the program does not run under any of the limits here";
}

// RLIMIT_FSIZE of 64 KiB set by the program: its own 10 KiB file is
// written, the trace stops at the limit with EFBIG (not SIGXFSZ), and
// `memtrail run` says the trace was cut and why.
TEST(GuestLimits, FileSizeLimitOfItsOwn) {
  TempDir dir;
  run_command("mkdir " + shell_quote(dir / "plain") + " " + shell_quote(dir / "traced"));
  CommandResult plain =
      run_command(with_timeout(std::string(LIMITS_BIN) + " fsize " + shell_quote(dir / "plain")));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  CommandResult traced =
      run_command(with_timeout(kMemtrail + " run -o " + shell_quote(dir / "t") + " -- " +
                               LIMITS_BIN + " fsize " + shell_quote(dir / "traced")));
  EXPECT_EQ(traced.exit_code, plain.exit_code) << traced.err;
  EXPECT_EQ(traced.out, plain.out);
  EXPECT_EQ(memtrail::test::slurp(dir / "traced/out"), memtrail::test::slurp(dir / "plain/out"));
  EXPECT_NE(traced.err.find("File too large; tracing stopped"), std::string::npos) << traced.err;
  EXPECT_NE(traced.err.find("is not whole"), std::string::npos) << traced.err;
  expect_traces_read_back(dir, true);
}

// ---- item 5: sandboxes ------------------------------------------------------

// unshare(CLONE_NEWUSER) and setns into a user namespace need a
// single-threaded process: the tracer's threads leave for the call and come
// back, so it works as untraced, and the events before and after it are
// all in the trace.
class GuestUserNamespace : public ::testing::TestWithParam<const char*> {};

TEST_P(GuestUserNamespace, WorksAsUntraced) {
  const std::string command = std::string(USERNS_BIN) + " " + GetParam();
  CommandResult plain = run_command(with_timeout(command));
  if (plain.out.find(": ok\n") == std::string::npos)
    GTEST_SKIP() << "a user namespace is refused here untraced (kernel or sandbox): " << plain.out;
  TempDir dir;
  expect_same_traced(dir, command);
  bool found = false;
  for (const auto& t : trace_summaries(dir)) {  // setns: the helper child's trace too
    EXPECT_FALSE(t.warned) << t.path;
    EXPECT_EQ(t.summary["unmatched_frees"], 0) << t.path;
    found |= t.summary["allocations"] == 2001;  // 2000 churned, stdout's buffer
  }
  EXPECT_TRUE(found) << "no trace holds the program's 2001 allocations";
  if (std::string(GetParam()) == "unshare" && have_tool("unshare")) {
    TempDir other;  // util-linux: `unshare -r id` maps root in a new user namespace
    expect_same_traced(other, "unshare -r id");
  }
}

INSTANTIATE_TEST_SUITE_P(Calls, GuestUserNamespace, ::testing::Values("unshare", "setns"),
                         [](const auto& info) { return std::string(info.param); });

// A seccomp allow-list installed by the program: tracing stops before it
// (the tracer's system calls could be forbidden: SIGSYS), the trace is
// finished with a mark that says why, and the program runs on untraced.
class GuestSeccomp : public ::testing::TestWithParam<const char*> {};

TEST_P(GuestSeccomp, AllowListFilter) {
  const std::string command = std::string(SECCOMP_FILTER_BIN) + " " + GetParam();
  CommandResult plain = run_command(with_timeout(command));
  if (plain.exit_code != 0)
    GTEST_SKIP() << "the filter program fails here untraced (exit " << plain.exit_code
                 << "): " << plain.out << plain.err;
  TempDir dir;
  CommandResult traced = expect_same_traced(dir, command);
  EXPECT_NE(traced.err.find("tracing stopped: the program installs a seccomp filter"),
            std::string::npos)
      << traced.err;
  auto traces = trace_summaries(dir);
  ASSERT_EQ(traces.size(), 1u);
  EXPECT_FALSE(traces[0].warned);
  EXPECT_GE(traces[0].summary["allocations"], 1000);  // those before the filter
  CommandResult dump = run_command(kMemtrail + " dump " + shell_quote(traces[0].path));
  EXPECT_NE(dump.out.find("mark"), std::string::npos);
  EXPECT_NE(dump.out.find("text=\"tracing stopped: the program installs a seccomp filter"),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(InstalledBy, GuestSeccomp, ::testing::Values("prctl", "syscall"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
