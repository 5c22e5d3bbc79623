// Children made by system() and popen() (issue 26, item 9): glibc starts
// /bin/sh with its internal posix_spawn and `environ`. A program that took
// the tracing variables out of its environment first (clearenv, unsetenv,
// an environ array of its own) ran its shell and all the shell ran untraced,
// while run said "trace written (1 trace)". Now they are traced as with the
// environment untouched (or said missing when they cannot be), and the
// program reads its environment as it does untraced.
#include <gtest/gtest.h>

#include <string>

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
const std::string kSystemChild = SYSTEM_CHILD_BIN;
const std::string kTarget = EXEC_TARGET_BIN;

struct TempDir : memtrail::test::TempDir {
  TempDir() : memtrail::test::TempDir("lost-shell") {}
};

using memtrail::test::Runs;

// system_child HOW PROGRAM, untraced and under `memtrail run -o RUN`.
Runs run_both(const std::string& run, const std::string& how, const std::string& program) {
  return memtrail::test::run_both(kMemtrail, run, kSystemChild, how, program);
}

// How many traces of the run are the image `program` (its base name).
std::size_t traces_of(const std::string& run, const std::string& program) {
  const std::string name = "." + program.substr(program.rfind('/') + 1) + ".mtr";
  std::size_t n = 0;
  for (const std::string& trace : run_traces(run))
    if (trace.size() > name.size() &&
        trace.compare(trace.size() - name.size(), name.size(), name) == 0)
      ++n;
  return n;
}

// The shell and the program it runs are traced as when the environment is
// left as memtrail run made it (`keepenv`); the program's output (its
// environment as it reads it after the call included) is its untraced one.
void expect_traced_as_with_environment_kept(const std::string& how) {
  TempDir dir;
  Runs kept = run_both(dir / "kept", "keepenv", kTarget);
  ASSERT_EQ(kept.traced.exit_code, 0) << kept.traced.err;
  Runs r = run_both(dir / "t", how, kTarget);
  ASSERT_NE(r.plain.out.find("target ok\nchild ok\nenvironment unchanged by the call, "),
            std::string::npos)
      << r.plain.out << r.plain.err;
  EXPECT_EQ(r.traced.out, r.plain.out);
  EXPECT_EQ(r.traced.exit_code, r.plain.exit_code) << r.traced.err;
  EXPECT_NE(r.traced.err.find("trace written"), std::string::npos) << r.traced.err;
  EXPECT_EQ(traces_of(dir / "t", kTarget), 1u) << r.traced.err;
  EXPECT_EQ(run_traces(dir / "t").size(), run_traces(dir / "kept").size()) << r.traced.err;
  auto check = run_command(kMemtrail + " check --max-leaked 1GiB " + shell_quote(dir / "t"));
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
}

TEST(LostShell, SystemAfterClearenvIsTraced) {
  expect_traced_as_with_environment_kept("clearenv");
}

TEST(LostShell, PopenAfterUnsetenvIsTraced) {
  expect_traced_as_with_environment_kept("unsetenv");
}

TEST(LostShell, SystemWithEnvironArrayOfItsOwnIsTraced) {
  expect_traced_as_with_environment_kept("ownenv");
}

// Twelve calls from four threads at once share the loan (the last one out
// ends it): every shell and program traced, the environment as it was.
TEST(LostShell, SystemFromThreadsAtOnceAfterUnsetenvIsTraced) {
  TempDir dir;
  Runs r = run_both(dir / "t", "threads", kTarget);
  std::string expected;
  for (int i = 0; i < 12; ++i) expected += "target ok\n";
  expected += "child ok\nenvironment unchanged by the call, LD_PRELOAD unset\n";
  ASSERT_EQ(r.plain.out, expected) << r.plain.err;
  EXPECT_EQ(r.traced.out, r.plain.out);
  EXPECT_EQ(r.traced.exit_code, r.plain.exit_code) << r.traced.err;
  EXPECT_NE(r.traced.err.find("trace written"), std::string::npos) << r.traced.err;
  EXPECT_EQ(traces_of(dir / "t", kTarget), 12u) << r.traced.err;
}

// Another thread changes the environment while a system() call has it lent:
// the program reads back what it reads untraced (the change, no tracing
// variable), whether glibc changed the lent array in place or replaced it.
void expect_change_during_call_kept(const std::string& how) {
  TempDir dir;
  Runs r = run_both(dir / "t", how, "/bin/sleep 0.5");
  ASSERT_NE(r.plain.out.find("child ok, LD_PRELOAD unset"), std::string::npos) << r.plain.err;
  EXPECT_EQ(r.traced.out, r.plain.out);
  EXPECT_EQ(r.traced.exit_code, r.plain.exit_code) << r.traced.err;
  EXPECT_NE(r.traced.err.find("trace written"), std::string::npos) << r.traced.err;
  EXPECT_EQ(traces_of(dir / "t", "sleep"), 1u) << r.traced.err;
}

TEST(LostShell, EnvironmentChangedInPlaceDuringSystemIsKept) {
  expect_change_during_call_kept("inplace");
}

TEST(LostShell, EnvironmentReplacedDuringSystemIsKeptWithoutTracingVariables) {
  expect_change_during_call_kept("added");
}

// A child forked while another thread's system() has the environment lent
// reads the program's environment, without the tracing variables (its
// line, "forked child: LD_PRELOAD unset", is in the output compared).
TEST(LostShell, ChildForkedDuringSystemSeesTheProgramsEnvironment) {
  expect_change_during_call_kept("fork");
}

// A static program run by the shell: its exec is announced by the shell's
// own interposer, so the run says its trace is missing.
TEST(LostShell, SystemAfterClearenvOfStaticProgramIsSaidMissing) {
  TempDir dir;
  Runs r = run_both(dir / "t", "clearenv", EXEC_TARGET_STATIC_BIN);
  ASSERT_EQ(r.plain.out,
            "target ok\nchild ok\nenvironment unchanged by the call, LD_PRELOAD unset\n")
      << r.plain.err;
  EXPECT_EQ(r.traced.out, r.plain.out);
  EXPECT_EQ(r.traced.exit_code, 2) << r.traced.err;
  EXPECT_EQ(r.traced.err.find("trace written"), std::string::npos) << r.traced.err;
  EXPECT_TRUE(says_missing_exec(r.traced.err, EXEC_TARGET_STATIC_BIN)) << r.traced.err;
  memtrail::test::expect_report_and_check_say_missing(kMemtrail, dir / "t", EXEC_TARGET_STATIC_BIN);
}

// With --no-follow children are untraced on purpose: nothing is lent.
TEST(LostShell, NoFollowSystemLeavesChildrenUntraced) {
  TempDir dir;
  auto r = run_command(kMemtrail + " run --no-follow -o " + shell_quote(dir / "t") + " -- " +
                       kSystemChild + " clearenv " + shell_quote(kTarget));
  EXPECT_EQ(r.out, "target ok\nchild ok\nenvironment unchanged by the call, LD_PRELOAD unset\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(run_traces(dir / "t").size(), 1u) << r.err;
}

}  // namespace
