// Children made without fork (issue 26, item 9): glibc's posix_spawn execs
// inside its child with its internal execve, and a vfork child execs with
// the parent's trace untouched. A child image that cannot be traced (static,
// set-user-ID) must be said missing, as an exec's is; one that can must be
// traced as always, and a spawn that fails must leave nothing said missing.
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
const std::string kSpawn = SPAWN_CHILD_BIN;

struct TempDir : memtrail::test::TempDir {
  TempDir() : memtrail::test::TempDir("lost-spawn") {}
};

using memtrail::test::Runs;

// spawn_child HOW PROGRAM, untraced and under `memtrail run -o RUN`.
Runs run_both(const std::string& run, const std::string& how, const std::string& program) {
  return memtrail::test::run_both(kMemtrail, run, kSpawn, how, program);
}

// The child image cannot be traced: the program's output is unchanged, run
// says the child's trace is missing (exit 2, never "written"), and only the
// parent's trace is there.
void expect_untraceable_child_said_missing(const std::string& how, const std::string& program) {
  TempDir dir;
  Runs r = run_both(dir / "t", how, program);
  ASSERT_EQ(r.plain.out, "target ok\nchild ok\n") << r.plain.err;
  EXPECT_EQ(r.plain.exit_code, 0);
  EXPECT_EQ(r.traced.out, r.plain.out);
  EXPECT_EQ(r.traced.exit_code, 2) << r.traced.err;
  EXPECT_EQ(r.traced.err.find("trace written"), std::string::npos) << r.traced.err;
  EXPECT_TRUE(says_missing_exec(r.traced.err, program)) << r.traced.err;
  EXPECT_EQ(run_traces(dir / "t").size(), 1u) << r.traced.err;
  memtrail::test::expect_report_and_check_say_missing(kMemtrail, dir / "t", program);
}

// Every image traced: same output and exit as untraced, `traces` traces,
// nothing missing, check passes.
void expect_all_traced(const Runs& r, const std::string& run, std::size_t traces) {
  EXPECT_EQ(r.traced.out, r.plain.out);
  EXPECT_EQ(r.traced.exit_code, r.plain.exit_code) << r.traced.err;
  EXPECT_EQ(r.traced.err.find("missing"), std::string::npos) << r.traced.err;
  EXPECT_NE(r.traced.err.find("trace written"), std::string::npos) << r.traced.err;
  EXPECT_EQ(run_traces(run).size(), traces) << r.traced.err;
  auto check = run_command(kMemtrail + " check --max-leaked 1GiB " + shell_quote(run));
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
}

TEST(LostSpawn, PosixSpawnOfStaticProgramIsSaidMissing) {
  expect_untraceable_child_said_missing("spawn", EXEC_TARGET_STATIC_BIN);
}

TEST(LostSpawn, PosixSpawnpOfStaticProgramIsSaidMissing) {
  expect_untraceable_child_said_missing("spawnp", EXEC_TARGET_STATIC_BIN);
}

TEST(LostSpawn, PosixSpawnWithoutPidOfStaticProgramIsSaidMissing) {
  expect_untraceable_child_said_missing("nopid", EXEC_TARGET_STATIC_BIN);
}

TEST(LostSpawn, VforkExecOfStaticProgramIsSaidMissing) {
  expect_untraceable_child_said_missing("vfork", EXEC_TARGET_STATIC_BIN);
}

// The child's first exec fails (as in a search of PATH), its second runs
// the static program: only the failed one's announcement is taken back.
TEST(LostSpawn, VforkSearchEndingInStaticProgramIsSaidMissing) {
  expect_untraceable_child_said_missing("vforksearch", EXEC_TARGET_STATIC_BIN);
}

// Where a vfork child may not copy the run's list out of its parent's
// writer thread (Yama's ptrace_scope 1 refuses pidfd_getfd to a
// descendant), it opens the list again by its path.
TEST(LostSpawn, VforkExecOfStaticProgramIsSaidMissingWithoutPidfdGetfd) {
  auto probe = run_command(std::string(NO_PIDFD_GETFD_BIN) + " true");
  if (probe.out.rfind("no seccomp: ", 0) == 0) GTEST_SKIP() << probe.out;
  TempDir dir;
  const std::string args = " vfork " + shell_quote(EXEC_TARGET_STATIC_BIN);
  auto traced = run_command(std::string(NO_PIDFD_GETFD_BIN) + " " + kMemtrail + " run -o " +
                            shell_quote(dir / "t") + " -- " + kSpawn + args);
  EXPECT_EQ(traced.out, "target ok\nchild ok\n");
  EXPECT_EQ(traced.exit_code, 2) << traced.err;
  EXPECT_TRUE(says_missing_exec(traced.err, EXEC_TARGET_STATIC_BIN)) << traced.err;
}

// A set-user-ID copy owned by another user: the loader runs it in secure
// mode and ignores LD_PRELOAD (owned by root and run by root it would not).
TEST(LostSpawn, PosixSpawnOfSetUserIdProgramIsSaidMissing) {
  if (geteuid() != 0) GTEST_SKIP() << "not root: cannot make a set-user-ID copy of another user";
  TempDir dir;
  std::string copy = dir / "setuid_target";
  auto made = run_command("cp " + shell_quote(EXEC_TARGET_BIN) + " " + shell_quote(copy) +
                          " && chown 65534 " + shell_quote(copy) + " && chmod 4755 " +
                          shell_quote(copy) + " && chmod 755 " + shell_quote(dir.path()));
  ASSERT_EQ(made.exit_code, 0) << made.err;
  auto probe = run_command(shell_quote(copy));
  if (probe.out != "target ok\n") GTEST_SKIP() << "the copy does not run: " << probe.err;
  auto secure = run_command("LD_PRELOAD=/nonexistent.so " + shell_quote(copy));
  if (secure.err.find("nonexistent") != std::string::npos)
    GTEST_SKIP() << "set-user-ID bits ignored here (nosuid mount?)";
  expect_untraceable_child_said_missing("spawn", copy);
}

TEST(LostSpawn, PosixSpawnWithSetsidAndFileActionsIsTraced) {
  TempDir dir;
  Runs r = run_both(dir / "t", "setsid", EXEC_TARGET_BIN);
  ASSERT_EQ(r.plain.out, "target ok\nchild ok\n") << r.plain.err;
  expect_all_traced(r, dir / "t", 2);
}

TEST(LostSpawn, VforkExecOfDynamicProgramIsTraced) {
  TempDir dir;
  Runs r = run_both(dir / "t", "vfork", EXEC_TARGET_BIN);
  ASSERT_EQ(r.plain.out, "target ok\nchild ok\n") << r.plain.err;
  expect_all_traced(r, dir / "t", 2);
}

// An environment without LD_PRELOAD gets the tracing variables back, as an
// exec's does: the child is traced rather than silently not.
TEST(LostSpawn, PosixSpawnWithCleanEnvironmentIsTraced) {
  TempDir dir;
  Runs r = run_both(dir / "t", "cleanenv", EXEC_TARGET_BIN);
  ASSERT_EQ(r.plain.out, "target ok\nchild ok\n") << r.plain.err;
  expect_all_traced(r, dir / "t", 2);
}

TEST(LostSpawn, VforkExecWithCleanEnvironmentIsTraced) {
  TempDir dir;
  Runs r = run_both(dir / "t", "vforkclean", EXEC_TARGET_BIN);
  ASSERT_EQ(r.plain.out, "target ok\nchild ok\n") << r.plain.err;
  expect_all_traced(r, dir / "t", 2);
}

// glibc reports the child's failed exec as posix_spawn's error: nothing is
// announced, nothing missing.
TEST(LostSpawn, PosixSpawnOfMissingPathIsNotMissing) {
  TempDir dir;
  Runs r = run_both(dir / "t", "spawn", dir / "no-such-program");
  ASSERT_EQ(r.plain.out, "spawn failed: No such file or directory\n") << r.plain.err;
  expect_all_traced(r, dir / "t", 1);
}

// The vfork child's exec returns: its announcement is taken back.
TEST(LostSpawn, VforkExecOfMissingPathIsNotMissing) {
  TempDir dir;
  Runs r = run_both(dir / "t", "vfork", dir / "no-such-program");
  ASSERT_EQ(r.plain.out, "child failed\n") << r.plain.err;
  expect_all_traced(r, dir / "t", 1);
}

// CPython's subprocess: a vfork child that searches PATH itself with
// execve (a directory without the program first), or posix_spawn.
const std::string kPython = "/usr/bin/python3";

// Python code that runs `call` (a subprocess.run(...) expression).
std::string python_code(const std::string& call) {
  return "import subprocess, sys\nsys.stdout.flush()\nr = " + call +
         "\nprint('child', 'ok' if r.returncode == 0 else 'failed')";
}

void expect_python_child_said_missing(const std::string& call) {
  struct stat st;
  if (::stat(kPython.c_str(), &st) != 0) GTEST_SKIP() << kPython << " is not installed";
  TempDir dir;
  const std::string args = " -c " + shell_quote(python_code(call));
  auto plain = run_command(kPython + args);
  ASSERT_EQ(plain.out, "target ok\nchild ok\n") << plain.err;
  auto traced =
      run_command(kMemtrail + " run -o " + shell_quote(dir / "t") + " -- " + kPython + args);
  EXPECT_EQ(traced.out, plain.out);
  EXPECT_EQ(traced.exit_code, 2) << traced.err;
  EXPECT_TRUE(says_missing_exec(traced.err, EXEC_TARGET_STATIC_BIN)) << traced.err;
}

TEST(LostSpawn, PythonSubprocessSearchingPathForStaticProgramIsSaidMissing) {
  const std::string program = EXEC_TARGET_STATIC_BIN;
  const std::string dir = program.substr(0, program.rfind('/'));
  const std::string name = program.substr(program.rfind('/') + 1);
  expect_python_child_said_missing("subprocess.run(['" + name +
                                   "'], env={'PATH': '/nonexistent:" + dir + "'})");
}

// close_fds=False and a path with a directory: CPython uses posix_spawn.
TEST(LostSpawn, PythonPosixSpawnOfStaticProgramIsSaidMissing) {
  expect_python_child_said_missing("subprocess.run(['" EXEC_TARGET_STATIC_BIN
                                   "'], close_fds=False)");
}

// With --no-follow children are untraced on purpose: nothing missing.
TEST(LostSpawn, NoFollowSpawnIsNotMissing) {
  TempDir dir;
  auto r = run_command(kMemtrail + " run --no-follow -o " + shell_quote(dir / "t") + " -- " +
                       kSpawn + " spawn " + EXEC_TARGET_STATIC_BIN);
  EXPECT_EQ(r.out, "target ok\nchild ok\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("missing"), std::string::npos) << r.err;
  EXPECT_EQ(run_traces(dir / "t").size(), 1u) << r.err;
}

}  // namespace
