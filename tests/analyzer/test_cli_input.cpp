// The real `memtrail` binary on input that selects nothing or is not a file
// (issue 15 items 10, 11, 14): a check that saw no event fails (exit 2)
// instead of passing; an unknown --pool is the same error in every command;
// a pipe or a directory is one line naming what it is.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "trace_builder.hpp"

namespace memtrail {
namespace {

using test::memtrail;
using test::shell_quote;
using test::temp_trace;
using test::TraceBuilder;

// Two chunks on the heap pool "malloc": 1 KiB allocated at 10 ns, 2 KiB at
// 20 ns, nothing freed.
void write_two_chunks(TraceBuilder& b) {
  b.pool(1, "malloc", PoolKind::heap);
  b.alloc(10, 1, 0x1000, 1024);
  b.writer().flush();
  b.alloc(20, 1, 0x2000, 2048);
}

// The trace with one byte of its first chunk's payload flipped: the reader
// stops at that chunk, before any event.
std::string damage_first_chunk(const std::string& bytes) {
  // Header: 8 magic, u16 version, u16 flags, u32 payload length, payload,
  // u32 crc; the first chunk follows.
  std::uint32_t length = 0;
  for (int i = 0; i < 4; ++i) length |= std::uint32_t(std::uint8_t(bytes[12 + i])) << (8 * i);
  std::string damaged = bytes;
  damaged[16 + length + 4 + 12] ^= 0x5A;
  return damaged;
}

std::string write_bytes(const std::string& name, const std::string& bytes) {
  std::string path = temp_trace(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(CliInput, CheckOnTraceDamagedBeforeItsFirstEventFailsWithPartial) {
  TraceBuilder b(temp_trace("in-damaged-src.mtr"));
  write_two_chunks(b);
  const std::string path =
      write_bytes("in-damaged.mtr", damage_first_chunk(test::slurp(b.finish())));
  auto r = memtrail("check --partial --max-leaked 1MiB --no-symbols " + shell_quote(path));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  // The damage (a warning under --partial), then why the check cannot pass.
  EXPECT_EQ(r.err_lines(), 2) << r.err;
  EXPECT_TRUE(test::contains(r.err, "no events were read from the trace; a check needs events"))
      << r.err;
  // report still prints its (empty) report, with one line saying so.
  auto report = memtrail("report --partial --no-symbols " + shell_quote(path));
  EXPECT_EQ(report.exit_code, 0) << report.err;
  EXPECT_TRUE(test::contains(report.err, "note: ")) << report.err;
  EXPECT_TRUE(test::contains(report.err, "no events were read")) << report.err;
  std::remove(path.c_str());
}

TEST(CliInput, CheckWithARangeThatSelectsNoEventFails) {
  TraceBuilder b(temp_trace("in-range.mtr"));
  write_two_chunks(b);
  const std::string path = shell_quote(b.finish());
  auto r = memtrail("check --from 2s --max-leaked 1MiB --no-symbols " + path);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_TRUE(test::contains(
      r.err, "the range 2000000000 ns .. end selects none of the 2 events read; a check needs"))
      << r.err;
  // The same range holding an event still checks (and fails on the leak).
  EXPECT_EQ(memtrail("check --from 15ns --no-symbols " + path).exit_code, 1);
  EXPECT_EQ(memtrail("check --from 15ns --max-leaked 2KiB --no-symbols " + path).exit_code, 0);
}

TEST(CliInput, UnknownPoolIsTheSameErrorInEveryCommand) {
  TraceBuilder b(temp_trace("in-pool.mtr"));
  write_two_chunks(b);
  const std::string path = shell_quote(b.finish());
  const std::string message = "pool 'nosuch' is not in the trace (pools: 'malloc')\n";
  const std::vector<std::string> commands = {"report", "check", "export --format json",
                                             "diff " + path};
  for (const std::string& cmd : commands) {
    auto r = memtrail(cmd + " --pool nosuch --no-symbols " + path);
    EXPECT_EQ(r.exit_code, 2) << cmd << "\n" << r.out << r.err;
    EXPECT_EQ(r.err_lines(), 1) << cmd << "\n" << r.err;
    EXPECT_TRUE(test::contains(r.err, message)) << cmd << "\n" << r.err;
    EXPECT_EQ(r.out, "") << cmd;
  }
  // The pool the trace has is accepted everywhere.
  EXPECT_EQ(memtrail("report --pool malloc --no-symbols " + path).exit_code, 0);
}

TEST(CliInput, PipeAndDirectoryAsTraceAreOneLineErrors) {
  TraceBuilder b(temp_trace("in-pipe-src.mtr"));
  write_two_chunks(b);
  const std::string good = b.finish();
  const std::string fifo = temp_trace("in.fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // A writer that feeds the trace into the pipe, as `cat x.mtr > fifo` would
  // (killed if nobody opens the pipe, so the test never hangs on it).
  const std::string feed =
      "(timeout 20 cat " + shell_quote(good) + " > " + shell_quote(fifo) + " 2>/dev/null &) ; ";
  for (const char* cmd : {"report", "check", "replay"}) {
    auto r = test::run_command(feed + MEMTRAIL_BIN + " " + cmd + " " + shell_quote(fifo));
    EXPECT_EQ(r.exit_code, 2) << cmd << "\n" << r.err;
    EXPECT_EQ(r.err_lines(), 1) << cmd << "\n" << r.err;
    EXPECT_TRUE(test::contains(r.err, "pipe")) << cmd << "\n" << r.err;
    EXPECT_TRUE(test::contains(r.err, "not supported") ||
                test::contains(r.err, "regular files only"))
        << cmd << "\n"
        << r.err;
  }
  test::run_command("timeout 1 cat " + shell_quote(fifo) +
                    " >/dev/null 2>&1");  // unblock the writer
  std::remove(fifo.c_str());

  const std::string dir = temp_trace("in-dir");
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  auto r = memtrail("report " + shell_quote(dir));
  EXPECT_EQ(r.exit_code, 2);
  // A directory is read as a run of `memtrail run`; one without traces is not.
  EXPECT_EQ(r.err,
            "memtrail report: " + dir + " holds no memtrail trace (*.mtr): not a run directory\n");
  rmdir(dir.c_str());
}

TEST(CliInput, DirectoryAsSuppressionsFileIsAnError) {
  TraceBuilder b(temp_trace("in-supp.mtr"));
  write_two_chunks(b);
  const std::string path = shell_quote(b.finish());
  const std::string dir = temp_trace("in-supp-dir");
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  auto r = memtrail("check --max-leaked 1MiB --no-symbols --suppressions " + shell_quote(dir) +
                    " " + path);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.err, "memtrail check: cannot read suppressions file '" + dir + "': is a directory\n");
  auto missing = memtrail("check --suppressions " + shell_quote(dir + "/none.supp") + " " + path);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(test::contains(missing.err, "No such file or directory")) << missing.err;
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace memtrail
