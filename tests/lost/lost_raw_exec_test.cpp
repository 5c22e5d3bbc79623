// Children exec'd where no interposer sees it (issue 26, item 9): a raw
// execve system call (Go's os/exec, raw_exec.c) with LD_PRELOAD out of the
// new image's environment. Nothing in the traced process can see it;
// `memtrail run` watches the program's descendants in /proc and says the
// image's trace is missing (exit 2, never "written"), as report and check
// then do. The children here live a second: an image that lives shorter
// than the watch's interval may escape (docs/tracing.md).
#include <gtest/gtest.h>

#include <limits.h>
#include <stdlib.h>

#include <string>

#include <nlohmann/json.hpp>

#include "run_command.hpp"
#include "run_dir.hpp"
#include "temp_dir.hpp"
#include "toolchains.hpp"

namespace {

using memtrail::test::run_command;
using memtrail::test::run_traces;
using memtrail::test::shell_quote;

const std::string kMemtrail = MEMTRAIL_BIN;
const std::string kSleep = "/bin/sleep";  // dynamic: traced, had it the preload

// The path /proc shows of an executable (/bin may be a link to /usr/bin).
std::string resolved(const std::string& path) {
  char out[PATH_MAX];
  return ::realpath(path.c_str(), out) ? out : path;
}

struct TempDir : memtrail::test::TempDir {
  TempDir() : memtrail::test::TempDir("lost-raw-exec") {}
};

// `run`'s stderr names the trace of an image of `program` run untraced.
bool says_ran_untraced(const std::string& err, const std::string& program) {
  return err.find("missing: the trace of pid ") != std::string::npos &&
         err.find("ran without the tracer: " + program) != std::string::npos;
}

// report (text and JSON) and check say the missing trace; check fails
// unless told to accept the loss.
void expect_report_and_check_say_untraced(const std::string& run, const std::string& program) {
  auto text = run_command(kMemtrail + " report " + shell_quote(run));
  EXPECT_NE(text.out.find("MISSING TRACES"), std::string::npos) << text.out << text.err;
  EXPECT_NE(text.out.find("ran without the tracer: " + program), std::string::npos) << text.out;
  auto json = run_command(kMemtrail + " report --json " + shell_quote(run));
  auto doc = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << json.out << json.err;
  ASSERT_EQ(doc["missing_traces"].size(), 1u) << json.out;
  auto check = run_command(kMemtrail + " check --max-leaked 1GiB " + shell_quote(run));
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
  EXPECT_NE(check.err.find("FAIL missing-traces: the trace of pid "), std::string::npos)
      << check.err;
  auto accepted =
      run_command(kMemtrail + " check --max-leaked 1GiB --accept-lost-events " + shell_quote(run));
  EXPECT_EQ(accepted.exit_code, 0) << accepted.out << accepted.err;
}

// `command` (a program that starts one child of /bin/sleep 1 untraced),
// untraced and under `memtrail run`: same output, the child said missing.
void expect_untraced_child_said_missing(const std::string& command, const std::string& run) {
  auto plain = run_command(command);
  ASSERT_EQ(plain.out, "children ok\n") << plain.err;
  auto traced = run_command(kMemtrail + " run -o " + shell_quote(run) + " -- " + command);
  EXPECT_EQ(traced.out, plain.out);
  EXPECT_EQ(traced.exit_code, 2) << traced.err;
  EXPECT_EQ(traced.err.find("trace written"), std::string::npos) << traced.err;
  EXPECT_TRUE(says_ran_untraced(traced.err, resolved(kSleep))) << traced.err;
  expect_report_and_check_say_untraced(run, resolved(kSleep));
}

TEST(LostRawExec, RawExecveWithoutPreloadIsSaidMissing) {
  TempDir dir;
  expect_untraced_child_said_missing(std::string(RAW_EXEC_BIN) + " 1 " + kSleep + " 1", dir / "t");
  EXPECT_EQ(run_traces(dir / "t").size(), 2u);  // raw_exec and its fork child before the exec
}

TEST(LostRawExec, GoExecWithEnvironmentOfItsOwnIsSaidMissing) {
  if (!memtrail::test::have_tool("go"))
    GTEST_SKIP() << "go not installed (Debian package golang-go)";
  TempDir dir;
  auto build = memtrail::test::go_build_offline(dir.path(), GO_EXEC_SOURCE, dir / "go_exec");
  ASSERT_EQ(build.exit_code, 0) << build.err;
  expect_untraced_child_said_missing(shell_quote(dir / "go_exec") + " 1 " + kSleep + " 1",
                                     dir / "t");
}

// A child exec'd the same way with the tracing variables in its
// environment is traced: nothing missing.
TEST(LostRawExec, RawExecveKeepingEnvironmentIsNotMissing) {
  TempDir dir;
  auto r = run_command(kMemtrail + " run -o " + shell_quote(dir / "t") + " -- " + RAW_EXEC_BIN +
                       " -k 1 " + kSleep + " 1");
  EXPECT_EQ(r.out, "children ok\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("missing"), std::string::npos) << r.err;
}

// With --no-follow children are untraced on purpose: nothing missing.
TEST(LostRawExec, NoFollowRawExecveIsNotMissing) {
  TempDir dir;
  auto r = run_command(kMemtrail + " run --no-follow -o " + shell_quote(dir / "t") + " -- " +
                       RAW_EXEC_BIN + " 1 " + kSleep + " 1");
  EXPECT_EQ(r.out, "children ok\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("missing"), std::string::npos) << r.err;
  EXPECT_EQ(run_traces(dir / "t").size(), 1u) << r.err;
}

}  // namespace
