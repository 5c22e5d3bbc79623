// The tracer's descriptors never take the program's (issue 26, item 4): a
// program that dup2s its file onto 1023..900 gets every number, every line
// it writes lands in its file, and the trace reads back whole.
#include <gtest/gtest.h>

#include <string>

#include "memtrail/trace_file.hpp"
#include "run_command.hpp"
#include "run_dir.hpp"
#include "temp_dir.hpp"

namespace {

using memtrail::test::only_trace;
using memtrail::test::run_command;
using memtrail::test::shell_quote;

struct TempDir : memtrail::test::TempDir {
  TempDir() : memtrail::test::TempDir("lost-fds") {}
};

struct Count : memtrail::TraceVisitor {
  std::uint64_t allocs = 0;
  void on_event(const memtrail::Event& e) override {
    allocs += e.kind == memtrail::EventKind::alloc && e.size >= 1100 && e.size <= 1223;
  }
};

TEST(LostFds, ProgramFileOnTheHighestNumbersTracedAsUntraced) {
  TempDir dir;
  // The shell's own limit may be lower: ask for 1024 (a hard limit below it
  // leaves the program saying so, the same traced and untraced).
  auto with_limit = [](const std::string& command) {
    return run_command("sh -c " + shell_quote("ulimit -n 1024 2>/dev/null; exec " + command));
  };
  auto plain = with_limit(std::string(DUP2_HIGH_BIN) + " " + shell_quote(dir / "plain.txt"));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  auto traced = with_limit(std::string(MEMTRAIL_BIN) + " run -o " + shell_quote(dir / "t") +
                           " -- " + DUP2_HIGH_BIN + " " + shell_quote(dir / "traced.txt"));
  ASSERT_EQ(traced.exit_code, 0) << traced.err;
  EXPECT_EQ(traced.out, plain.out);
  EXPECT_NE(traced.err.find("trace written"), std::string::npos) << traced.err;
  if (plain.out.find("below 1024") != std::string::npos) GTEST_SKIP() << "RLIMIT_NOFILE < 1024";
  Count c;
  memtrail::TraceReader reader(only_trace(dir / "t"));
  memtrail::ReadResult r = reader.read(c);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(c.allocs, 124u * 64u);
  auto report = run_command(std::string(MEMTRAIL_BIN) + " report " + shell_quote(dir / "t"));
  EXPECT_EQ(report.exit_code, 0) << report.err;
}

}  // namespace
