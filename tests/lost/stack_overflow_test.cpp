// A stack overflow under `memtrail run` (issue 26, item 8): the program dies
// of SIGSEGV as untraced, and its trace holds what it did before, ending
// with the signal; the tracer's alternate signal stack is invisible to it.
#include <gtest/gtest.h>

#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "memtrail/trace_file.hpp"
#include "run_command.hpp"
#include "run_dir.hpp"
#include "temp_dir.hpp"

namespace {

using memtrail::test::CommandResult;
using memtrail::test::only_trace;
using memtrail::test::run_command;
using memtrail::test::shell_quote;

const std::string kMemtrail = MEMTRAIL_BIN;
const std::string kProgram = STACK_OVERFLOW_BIN;

struct TempDir : memtrail::test::TempDir {
  TempDir() : memtrail::test::TempDir("stack") {}
};

struct Summary : memtrail::TraceVisitor {
  memtrail::ReadResult result;
  std::uint64_t kept_allocs = 0;  // the program's 4321-byte blocks
  int signal = 0;
  void on_event(const memtrail::Event& e) override {
    if (e.kind == memtrail::EventKind::alloc && e.size >= 4321 && e.requested == 4321)
      ++kept_allocs;
    if (e.kind == memtrail::EventKind::mark &&
        e.detail == static_cast<std::uint8_t>(memtrail::MarkDetail::signal))
      signal = static_cast<int>(e.size);
  }
};

// The shape untraced, then traced into `run` (no core files: the crash is
// the point). A hang fails the test through ctest's timeout.
struct Runs {
  CommandResult plain, traced;
};
Runs run_both(const TempDir& dir, const std::string& shape, std::string* run) {
  *run = dir / "t";
  Runs r;
  r.plain = run_command("ulimit -c 0; " + shell_quote(kProgram) + " " + shape);
  r.traced = run_command("ulimit -c 0; " + shell_quote(kMemtrail) + " run -o " + shell_quote(*run) +
                         " -- " + shell_quote(kProgram) + " " + shape);
  return r;
}

TEST(StackOverflow, TraceIsReadableAndEndsWithSigsegv) {
  TempDir dir;
  std::string run;
  Runs r = run_both(dir, "overflow", &run);
  EXPECT_EQ(r.plain.exit_code, 128 + SIGSEGV) << r.plain.err;
  EXPECT_EQ(r.traced.exit_code, r.plain.exit_code) << r.traced.err;
  EXPECT_EQ(r.traced.out, r.plain.out);
  EXPECT_EQ(r.traced.out, "recursing\n");
  EXPECT_NE(r.traced.err.find("trace written to"), std::string::npos) << r.traced.err;
  Summary t;
  memtrail::TraceReader reader(only_trace(run));
  t.result = reader.read(t);
  ASSERT_TRUE(t.result.ok) << t.result.error;
  EXPECT_TRUE(t.result.complete) << "no end-of-trace marker";
  EXPECT_EQ(t.kept_allocs, 100u);
  EXPECT_EQ(t.signal, SIGSEGV);
}

TEST(StackOverflow, ProgramSeesItsOwnSignalStackSetting) {
  TempDir dir;
  std::string run;
  Runs r = run_both(dir, "view", &run);
  ASSERT_EQ(r.plain.exit_code, 0) << r.plain.err;
  EXPECT_EQ(r.traced.exit_code, 0) << r.traced.err;
  // The same SS_DISABLE setting on both threads.
  auto plain = r.plain.out_lines(), traced = r.traced.out_lines();
  ASSERT_EQ(plain.size(), 3u) << r.plain.out;
  ASSERT_EQ(traced.size(), 3u) << r.traced.out;
  EXPECT_EQ(plain[0], "main: r=0 flags=2 sp=(nil) size=0");
  EXPECT_EQ(traced[0], plain[0]);
  EXPECT_EQ(traced[1], plain[1]);
  // mallinfo2()'s in-use bytes and arena within 1 MiB: the stacks are not
  // the program's heap.
  unsigned long plain_use = 0, plain_arena = 0, traced_use = 0, traced_arena = 0;
  ASSERT_EQ(
      std::sscanf(plain[2].c_str(), "in use %lu KiB, arena %lu KiB", &plain_use, &plain_arena), 2);
  ASSERT_EQ(
      std::sscanf(traced[2].c_str(), "in use %lu KiB, arena %lu KiB", &traced_use, &traced_arena),
      2);
  EXPECT_LT(std::labs(long(traced_use) - long(plain_use)), 1024) << r.traced.out;
  EXPECT_LT(std::labs(long(traced_arena) - long(plain_arena)), 1024) << r.traced.out;
}

TEST(StackOverflow, ProgramsOwnSignalStackIsUsed) {
  TempDir dir;
  std::string run;
  Runs r = run_both(dir, "own", &run);
  EXPECT_EQ(r.plain.exit_code, 7) << r.plain.err;
  EXPECT_EQ(r.traced.exit_code, 7) << r.traced.err;
  EXPECT_EQ(r.traced.out, r.plain.out);
  EXPECT_EQ(r.plain.out, "before: flags=2\nhandler on own stack: yes\n");
}

}  // namespace
