// The writer thread keeps the trace file and /proc/self/statm in a
// descriptor table of its own, taken with unshare(CLONE_FILES) as it starts
// (tracer/src/writer_thread.cpp, enter_own_table). A sandbox may refuse it
// (EPERM); the writer then works in the program's table. Here an LD_PRELOAD
// shim (unshare_refused.c) refuses it, and tests/guest/many_threads.c
// (churn 200) must run as untraced, with a whole trace of its threads.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "parity.hpp"
#include "temp_dir.hpp"

namespace {

using memtrail::test::observed_number;
using memtrail::test::ParityCase;
using memtrail::test::ProgramView;
using memtrail::test::run_command;
using memtrail::test::run_view;
using memtrail::test::shell_quote;

struct TempDir : memtrail::test::TempDir {
  TempDir() : memtrail::test::TempDir("unshare") {}
};

constexpr int kThreads = 200;

ParityCase churn(const std::string& name, const std::string& env) {
  return {name, shell_quote(MANY_THREADS_BIN) + " churn " + std::to_string(kThreads), env};
}

// Lines of `text` that contain `needle`.
int lines_with(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(needle) != std::string::npos;
  return n;
}

TEST(UnshareRefused, TheWriterWorksInTheProgramsTable) {
  TempDir dir;
  ParityCase refused = churn("refused", "LD_PRELOAD=" + shell_quote(UNSHARE_REFUSED_LIB));
  ProgramView plain = run_view(dir, refused, false);
  ProgramView traced = run_view(dir, refused, true);
  ProgramView usual = run_view(dir, churn("usual", ""), true);  // unshare granted
  ASSERT_EQ(plain.result.exit_code, 0) << plain.result.err;
  ASSERT_EQ(traced.result.exit_code, 0) << traced.result.err;
  ASSERT_EQ(usual.result.exit_code, 0) << usual.result.err;
  EXPECT_EQ(traced.out, plain.out);
  EXPECT_EQ(traced.err, plain.err) << traced.result.err;
  for (const char* exact : {"keys", "dlerror", "fds_low"})
    EXPECT_EQ(observed_number(traced, exact), observed_number(plain, exact)) << exact;
  // The shim took effect: the trace file (and statm) are in the program's
  // table now, which they are not when the writer has its own.
  long long fds = observed_number(traced, "fds");
  EXPECT_GT(fds, observed_number(usual, "fds")) << "unshare was not refused?";
  EXPECT_LE(fds, observed_number(plain, "fds") + 6);  // parity.hpp's 4, the file, statm
  long long rss = observed_number(plain, "rss_kib");
  EXPECT_LE(observed_number(traced, "rss_kib") - rss, rss / 10 + 16 * 1024);

  // The trace is whole: every thread's alloc and free, and its end marker.
  auto dump =
      run_command(std::string(MEMTRAIL_BIN) + " dump --no-tables " + shell_quote(traced.trace_dir));
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_GE(lines_with(dump.out, "alloc pool=1 addr=0x"), kThreads);
  EXPECT_GE(lines_with(dump.out, "free pool=1 addr=0x"), kThreads);
  EXPECT_EQ(lines_with(dump.out, std::to_string(kThreads + 1) + " threads"), 1) << dump.out;
  EXPECT_EQ(lines_with(dump.out, "; complete"), 1) << dump.out;
}

}  // namespace
