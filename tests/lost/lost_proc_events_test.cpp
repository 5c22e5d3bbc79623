// Every exec of every descendant, however short-lived (issue 26, item 9):
// where the kernel lets `memtrail run` listen to process events (root, the
// initial namespaces), each image a descendant execs by a raw system call
// without the tracer is said missing, even one that lives a millisecond and
// one exec'd by an orphan after its parent ended; a traced image is never
// said missing. Where run may not listen, it watches by walking /proc,
// which may let such images through, and says so (the walk's own tests:
// lost_raw_exec_test.cpp, children of a second).
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "run_command.hpp"
#include "temp_dir.hpp"
#include "toolchains.hpp"

namespace {

using memtrail::test::CommandResult;
using memtrail::test::run_command;
using memtrail::test::shell_quote;

const std::string kMemtrail = MEMTRAIL_BIN;
const std::string kTarget = EXEC_TARGET_BIN;  // 100 mallocs, one line: ~1 ms
constexpr int kChildren = 200;

// What run says when it could not listen and walked /proc instead.
constexpr const char* kWalkingNote = "child processes were watched by walking /proc";

struct TempDir : memtrail::test::TempDir {
  TempDir() : memtrail::test::TempDir("lost-proc-events") {}
};

std::string run_under_memtrail(const std::string& run, const std::string& command,
                               const std::string& environment = "") {
  return environment + kMemtrail + " run -o " + shell_quote(run) + " -- " + command;
}

// Skips the test where run could not listen: its stderr says so.
#define SKIP_UNLESS_RUN_LISTENED(result)                                               \
  if ((result).err.find(kWalkingNote) != std::string::npos)                            \
  GTEST_SKIP() << "memtrail run may not listen to process events here (needs root or " \
                  "CAP_NET_ADMIN in the initial namespaces): "                         \
               << (result).err.substr((result).err.find(kWalkingNote), 200)

// The run list's missing lines (".memtrail-run.missing").
int missing_lines(const std::string& run) {
  std::ifstream list(run + "/.memtrail-run.missing");
  int count = 0;
  for (std::string line; std::getline(list, line);)
    count += line.find("\tmissing\t") != std::string::npos;
  return count;
}

// `run` (exit 2, never "written"), report (text and JSON) and check (fails)
// say exactly `count` missing traces.
void expect_said_missing(const CommandResult& traced, const std::string& run, int count) {
  EXPECT_EQ(traced.exit_code, 2) << traced.err.substr(0, 2000);
  EXPECT_EQ(traced.err.find("trace written"), std::string::npos) << traced.err.substr(0, 2000);
  EXPECT_NE(traced.err.find("ran without the tracer: "), std::string::npos);
  EXPECT_EQ(missing_lines(run), count);
  auto text = run_command(kMemtrail + " report " + shell_quote(run));
  EXPECT_NE(text.out.find("MISSING TRACES"), std::string::npos) << text.err;
  auto json = run_command(kMemtrail + " report --json " + shell_quote(run));
  auto doc = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << json.err;
  EXPECT_EQ(doc["missing_traces"].size(), static_cast<std::size_t>(count));
  auto check = run_command(kMemtrail + " check --max-leaked 1GiB " + shell_quote(run));
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err.substr(0, 2000);
  EXPECT_NE(check.err.find("FAIL missing-traces: "), std::string::npos);
}

// `command` (which starts kChildren untraced children of exec_target one
// after the other) run untraced and traced: same output, every child said.
void expect_every_child_said_missing(const std::string& command, const TempDir& dir) {
  auto plain = run_command(command);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  auto traced = run_command(run_under_memtrail(dir / "t", command));
  SKIP_UNLESS_RUN_LISTENED(traced);
  EXPECT_EQ(traced.out, plain.out);
  expect_said_missing(traced, dir / "t", kChildren);
}

TEST(LostProcEvents, EveryShortRawExecveChildIsSaidMissing) {
  TempDir dir;
  expect_every_child_said_missing(
      std::string(RAW_EXEC_BIN) + " " + std::to_string(kChildren) + " " + kTarget, dir);
}

TEST(LostProcEvents, EveryShortGoExecChildIsSaidMissing) {
  if (!memtrail::test::have_tool("go"))
    GTEST_SKIP() << "go not installed (Debian package golang-go)";
  TempDir dir;
  auto build = memtrail::test::go_build_offline(dir.path(), GO_EXEC_SOURCE, dir / "go_exec");
  ASSERT_EQ(build.exit_code, 0) << build.err;
  expect_every_child_said_missing(
      shell_quote(dir / "go_exec") + " " + std::to_string(kChildren) + " " + kTarget, dir);
}

TEST(LostProcEvents, OrphanExecAfterItsParentEndedIsSaidMissing) {
  TempDir dir;
  const std::string command = std::string(ORPHAN_EXEC_BIN) + " " + kTarget;
  auto plain = run_command(command);
  ASSERT_EQ(plain.out, "target ok\norphan ok\n") << plain.err;
  auto traced = run_command(run_under_memtrail(dir / "t", command));
  SKIP_UNLESS_RUN_LISTENED(traced);
  EXPECT_EQ(traced.out, plain.out);
  // Its executable is named when run read it before it ended.
  expect_said_missing(traced, dir / "t", 1);
}

// Traced images exec'd by raw system calls (the environment kept), each
// forking and exec'ing a traced image in turn: none is said missing. A
// false "missing" is the worst outcome: ctest --repeat until-fail:10.
TEST(LostProcEvents, TracedChildExecingTracedChildIsNeverMissing) {
  TempDir dir;
  const std::string command = std::string(RAW_EXEC_BIN) + " -k 100 " + RAW_EXEC_BIN + " -k 1 " +
                              kTarget + " && /bin/sh -c 'exec /bin/sh -c \"exec " + kTarget + "\"'";
  auto traced = run_command(run_under_memtrail(dir / "t", "/bin/sh -c " + shell_quote(command)));
  SKIP_UNLESS_RUN_LISTENED(traced);
  EXPECT_EQ(traced.exit_code, 0) << traced.err.substr(0, 2000);
  EXPECT_EQ(traced.err.find("missing"), std::string::npos) << traced.err.substr(0, 2000);
  EXPECT_EQ(missing_lines(dir / "t"), 0);
}

// A static image exec'd by a raw system call with the tracing variables
// kept (no interposer announces it) cannot trace: said missing, each time,
// however long it lives (its environment names the tracer; its trace is
// not there).
TEST(LostProcEvents, StaticImageExecdWithTheVariablesIsSaidMissing) {
  TempDir dir;
  const std::string command = std::string(RAW_EXEC_BIN) + " -k 5 " + EXEC_TARGET_STATIC_BIN;
  auto traced = run_command(run_under_memtrail(dir / "t", command));
  SKIP_UNLESS_RUN_LISTENED(traced);
  EXPECT_EQ(traced.out, run_command(command).out);
  expect_said_missing(traced, dir / "t", 5);
  EXPECT_NE(traced.err.find("its environment named the tracer, but it left no trace"),
            std::string::npos)
      << traced.err.substr(0, 2000);
}

// Where run may not listen (forced here by its switch), it walks /proc,
// still finds a child that lives a second, and says how it watched.
TEST(LostProcEvents, WithoutProcessEventsRunWalksAndSaysSo) {
  TempDir dir;
  auto traced = run_command(run_under_memtrail(
      dir / "t", std::string(RAW_EXEC_BIN) + " 1 /bin/sleep 1", "MEMTRAIL_RUN_PROCESS_EVENTS=0 "));
  EXPECT_EQ(traced.out, "children ok\n");
  EXPECT_NE(
      traced.err.find(std::string(kWalkingNote) + " every 2 ms (no process events: turned off by "
                                                  "MEMTRAIL_RUN_PROCESS_EVENTS=0)"),
      std::string::npos)
      << traced.err;
  expect_said_missing(traced, dir / "t", 1);
}

// A program that makes no child process hears no note on how children
// were watched, whichever way.
TEST(LostProcEvents, NoNoteWithoutChildren) {
  TempDir dir;
  auto traced =
      run_command(run_under_memtrail(dir / "t", kTarget, "MEMTRAIL_RUN_PROCESS_EVENTS=0 "));
  EXPECT_EQ(traced.exit_code, 0) << traced.err;
  EXPECT_EQ(traced.err.find(kWalkingNote), std::string::npos) << traced.err;
}

}  // namespace
