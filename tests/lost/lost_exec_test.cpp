// A child that gives up root or chroots and then execs (issue 26, item 9):
// the exec'd image cannot create its trace in the run directory, and `memtrail
// run` must say which trace is missing rather than "trace written".
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include <nlohmann/json.hpp>

#include "missing_trace_checks.hpp"
#include "run_command.hpp"
#include "run_dir.hpp"
#include "temp_dir.hpp"

namespace {

using memtrail::test::run_command;
using memtrail::test::run_traces;
using memtrail::test::says_missing_exec;
using memtrail::test::shell_quote;

const std::string kMemtrail = MEMTRAIL_BIN;
const std::string kDrop = EXEC_AFTER_DROP_BIN;

struct TempDir : memtrail::test::TempDir {
  TempDir() : memtrail::test::TempDir("lost-exec") {}
};

// `memtrail run` of `args`, and the same untraced; skips when the drop is
// not permitted here.
struct Runs {
  memtrail::test::CommandResult plain, traced;
};

Runs run_both(const std::string& run, const std::string& args) {
  Runs r;
  r.plain = run_command(kDrop + " " + args);
  r.traced = run_command(kMemtrail + " run -o " + shell_quote(run) + " -- " + kDrop + " " + args);
  return r;
}

TEST(LostExec, ExecAfterSetuidIsSaidMissing) {
  TempDir dir;
  Runs r = run_both(dir / "t", "setuid " EXEC_TARGET_BIN);
  if (r.plain.out.rfind("no setuid: ", 0) == 0) GTEST_SKIP() << r.plain.out;
  ASSERT_EQ(r.plain.out, "target ok\nchild ok\n") << r.plain.err;
  EXPECT_EQ(r.traced.out, r.plain.out);
  EXPECT_NE(r.traced.exit_code, 0) << r.traced.err;
  EXPECT_EQ(r.traced.err.find("trace written"), std::string::npos) << r.traced.err;
  EXPECT_TRUE(says_missing_exec(r.traced.err, EXEC_TARGET_BIN)) << r.traced.err;
  // The parent's and the child's image before the exec.
  EXPECT_EQ(run_traces(dir / "t").size(), 2u) << r.traced.err;
  memtrail::test::expect_report_and_check_say_missing(kMemtrail, dir / "t", EXEC_TARGET_BIN);
}

// As on a kernel before 6.9 (no thread pidfds): the run's list stays in the
// program's table, and the announcement goes through it there.
TEST(LostExec, ExecAfterSetuidWithoutThreadPidfdsIsSaidMissing) {
  TempDir dir;
  const std::string args = "setuid " EXEC_TARGET_BIN;
  auto probe = run_command(std::string(NO_THREAD_PIDFD_BIN) + " true");
  if (probe.out.rfind("no seccomp: ", 0) == 0) GTEST_SKIP() << probe.out;
  Runs r;
  r.plain = run_command(kDrop + " " + args);
  if (r.plain.out.rfind("no setuid: ", 0) == 0) GTEST_SKIP() << r.plain.out;
  r.traced = run_command(std::string(NO_THREAD_PIDFD_BIN) + " " + kMemtrail + " run -o " +
                         shell_quote(dir / "t") + " -- " + kDrop + " " + args);
  EXPECT_EQ(r.traced.out, r.plain.out);
  EXPECT_NE(r.traced.exit_code, 0) << r.traced.err;
  EXPECT_EQ(r.traced.err.find("trace written"), std::string::npos) << r.traced.err;
  EXPECT_TRUE(says_missing_exec(r.traced.err, EXEC_TARGET_BIN)) << r.traced.err;
}

TEST(LostExec, ExecAfterChrootIsSaidMissing) {
  TempDir dir;
  std::string root = dir / "root";
  ASSERT_EQ(::mkdir(root.c_str(), 0755), 0);
  auto copy = run_command("cp " + shell_quote(EXEC_TARGET_STATIC_BIN) + " " +
                          shell_quote(root + "/target"));
  ASSERT_EQ(copy.exit_code, 0) << copy.err;
  Runs r = run_both(dir / "t", "chroot " + shell_quote(root) + " /target");
  if (r.plain.out.rfind("no chroot: ", 0) == 0) GTEST_SKIP() << r.plain.out;
  ASSERT_EQ(r.plain.out, "target ok\nchild ok\n") << r.plain.err;
  EXPECT_EQ(r.traced.out, r.plain.out);
  EXPECT_NE(r.traced.exit_code, 0) << r.traced.err;
  EXPECT_EQ(r.traced.err.find("trace written"), std::string::npos) << r.traced.err;
  EXPECT_TRUE(says_missing_exec(r.traced.err, "/target")) << r.traced.err;
  EXPECT_EQ(run_traces(dir / "t").size(), 2u) << r.traced.err;
  memtrail::test::expect_report_and_check_say_missing(kMemtrail, dir / "t", "/target");
}

// A plain exec still yields the new image's trace, and nothing is missing.
TEST(LostExec, PlainExecWritesItsTrace) {
  TempDir dir;
  Runs r = run_both(dir / "t", "plain " EXEC_TARGET_BIN);
  ASSERT_EQ(r.plain.out, "target ok\nchild ok\n") << r.plain.err;
  EXPECT_EQ(r.traced.out, r.plain.out);
  EXPECT_EQ(r.traced.exit_code, 0) << r.traced.err;
  EXPECT_EQ(r.traced.err.find("missing"), std::string::npos) << r.traced.err;
  EXPECT_NE(r.traced.err.find("trace written"), std::string::npos) << r.traced.err;
  EXPECT_EQ(run_traces(dir / "t").size(), 3u) << r.traced.err;
  auto check = run_command(kMemtrail + " check --max-leaked 1GiB " + shell_quote(dir / "t"));
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  auto json = run_command(kMemtrail + " report --json " + shell_quote(dir / "t"));
  EXPECT_EQ(json.out.find("missing_traces"), std::string::npos) << json.out;
}

// With --no-follow the exec'd image is untraced on purpose: nothing missing.
TEST(LostExec, NoFollowExecIsNotMissing) {
  TempDir dir;
  auto r = run_command(kMemtrail + " run --no-follow -o " + shell_quote(dir / "t") + " -- " +
                       kDrop + " plain " EXEC_TARGET_BIN);
  EXPECT_EQ(r.out, "target ok\nchild ok\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("missing"), std::string::npos) << r.err;
  EXPECT_EQ(run_traces(dir / "t").size(), 1u) << r.err;
}

}  // namespace
