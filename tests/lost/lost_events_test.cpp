// Every event the program made is in its trace, or `run`, `report` (text and
// JSON) and `check` say how many were lost and why (issue 26, items 8-10).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "memtrail/trace_file.hpp"
#include "run_command.hpp"
#include "run_dir.hpp"
#include "temp_dir.hpp"

namespace {

using memtrail::test::only_trace;
using memtrail::test::run_command;
using memtrail::test::run_traces;
using memtrail::test::shell_quote;

const std::string kMemtrail = MEMTRAIL_BIN;
const std::string kShapes = LOST_SHAPES_BIN;

struct TempDir : memtrail::test::TempDir {
  TempDir() : memtrail::test::TempDir("lost") {}
};

// Allocs and frees of a trace by size; lost marks summed.
struct Counts : memtrail::TraceVisitor {
  memtrail::ReadResult result;
  std::map<std::uint64_t, std::uint64_t> allocs, frees_of;
  std::map<std::uint64_t, std::uint64_t> live;  // address -> size
  std::uint64_t unmatched_frees = 0, lost = 0, segments = 0;
  void on_event(const memtrail::Event& e) override {
    using K = memtrail::EventKind;
    if (e.kind == K::alloc) {
      ++allocs[e.size];
      live[e.address] = e.size;
    } else if (e.kind == K::free) {
      auto it = live.find(e.address);
      if (it == live.end()) {
        ++unmatched_frees;
      } else {
        ++frees_of[it->second];
        live.erase(it);
      }
    } else if (e.kind == K::mark &&
               e.detail == static_cast<std::uint8_t>(memtrail::MarkDetail::lost)) {
      lost += e.size;
    }
  }
};

Counts read_counts(const std::string& path) {
  Counts c;
  memtrail::TraceReader reader(path);
  c.result = reader.read(c);
  return c;
}

std::string run_shape(const TempDir& dir, const std::string& shape,
                      memtrail::test::CommandResult* out) {
  std::string run = dir / "t";
  *out = run_command(kMemtrail + " run -o " + shell_quote(run) + " -- " + kShapes + " " + shape);
  return run;
}

// ---- item 11: a loss the recorder recorded ----------------------------------

// What the preload writes when its early buffer overflowed (a libtorch-like
// program: 393198 events before start-up), written here with TraceWriter.
TEST(LostEvents, RecordedLossIsSaidByReportJsonAndCheck) {
  TempDir dir;
  std::string path = dir / "lost.mtr";
  {
    memtrail::TraceWriter w(path, memtrail::TraceHeader{});
    w.add_pool({1, 0, "malloc", memtrail::PoolKind::heap, memtrail::MemorySpace::host, -1});
    w.add_string(1, "before start-up: beyond the early buffer");
    memtrail::Event alloc;
    alloc.kind = memtrail::EventKind::alloc;
    alloc.pool = 1;
    alloc.address = 0x1000;
    alloc.size = alloc.requested = 16;
    w.add_event(alloc);
    memtrail::Event lost;
    lost.kind = memtrail::EventKind::mark;
    lost.detail = static_cast<std::uint8_t>(memtrail::MarkDetail::lost);
    lost.size = 393198;
    lost.requested = static_cast<std::uint8_t>(memtrail::LostReason::before_startup);
    lost.aux = 1;
    w.add_event(lost);
  }
  auto report = run_command(kMemtrail + " report " + shell_quote(path));
  EXPECT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("lost events            393198 not in this trace (before start-up"),
            std::string::npos)
      << report.out;
  auto json_out = run_command(kMemtrail + " report --json " + shell_quote(path));
  ASSERT_EQ(json_out.exit_code, 0) << json_out.err;
  auto lost = nlohmann::json::parse(json_out.out)["trace"]["lost_events"];
  EXPECT_EQ(lost["count"], 393198);
  EXPECT_EQ(lost["cut"], false);
  ASSERT_EQ(lost["reasons"].size(), 1u);
  EXPECT_EQ(lost["reasons"][0]["reason"], "before_startup");
  EXPECT_EQ(lost["reasons"][0]["count"], 393198);
  // The block is a leak: a generous limit leaves only the loss to fail.
  auto check = run_command(kMemtrail + " check --max-leaked 1KiB " + shell_quote(path));
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
  EXPECT_NE(check.err.find("lost-events"), std::string::npos) << check.err;
  EXPECT_NE(check.err.find("393198 before start-up"), std::string::npos) << check.err;
  auto accepted =
      run_command(kMemtrail + " check --max-leaked 1KiB --accept-lost-events " + shell_quote(path));
  EXPECT_EQ(accepted.exit_code, 0) << accepted.out << accepted.err;
  EXPECT_NE(accepted.out.find("accepted"), std::string::npos) << accepted.out;
}

// 1.2M heap events from a library constructor, before the tracer's: every
// one is in the trace (past the first 1M without its stack), none lost.
TEST(LostEvents, MoreStartUpEventsThanTheStackedBufferAreAllRecorded) {
  TempDir dir;
  std::string run = dir / "t";
  auto r = run_command(kMemtrail + " run -o " + shell_quote(run) + " -- " + EARLY_HOST_BIN);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "host done after 600000\n");
  EXPECT_EQ(r.err.find("were not recorded"), std::string::npos) << r.err;
  Counts t = read_counts(only_trace(run));
  ASSERT_TRUE(t.result.ok) << t.result.error;
  EXPECT_EQ(t.lost, 0u);
  EXPECT_EQ(t.allocs[48], 600000u);
  EXPECT_EQ(t.frees_of[48], 600000u);
}

// ---- item 10: a signal handler that interrupts the recorder -----------------

TEST(LostEvents, HandlerMallocsThatInterruptTheRecorderAreAllRecorded) {
  TempDir dir;
  memtrail::test::CommandResult r;
  std::string run = run_shape(dir, "handler", &r);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "handler mallocs 3000\n");
  Counts t = read_counts(only_trace(run));
  ASSERT_TRUE(t.result.ok) << t.result.error;
  EXPECT_TRUE(t.result.complete);
  EXPECT_EQ(t.lost, 0u);
  EXPECT_EQ(t.allocs[777], 3000u);
  EXPECT_EQ(t.frees_of[777], 3000u);
  EXPECT_EQ(t.unmatched_frees, 0u);
  // The program maps nothing itself (glibc's arenas and thread stacks are
  // not interposed): the tracer's own mappings must not be queued as its.
  EXPECT_EQ(t.segments, 0u);
  EXPECT_NE(r.err.find("memtrail: trace written to"), std::string::npos) << r.err;
}

// ---- item 8: quick_exit finishes the trace ----------------------------------

TEST(LostEvents, QuickExitLeavesAWholeTrace) {
  TempDir dir;
  memtrail::test::CommandResult r;
  std::string run = run_shape(dir, "quick_exit", &r);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Counts t = read_counts(only_trace(run));
  ASSERT_TRUE(t.result.ok) << t.result.error;
  EXPECT_TRUE(t.result.complete);
  EXPECT_EQ(t.allocs[333], 1000u);
  EXPECT_NE(r.err.find("memtrail: trace written to"), std::string::npos) << r.err;
}

// ---- item 8: a raw exit_group cuts the trace: everyone says so ---------------

TEST(LostEvents, RawExitGroupIsSaidByRunReportAndCheck) {
  TempDir dir;
  memtrail::test::CommandResult r;
  std::string run = run_shape(dir, "exit_group", &r);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("trace written"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not whole"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("see above"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("without running its exit handlers"), std::string::npos) << r.err;

  auto report = run_command(kMemtrail + " report " + shell_quote(run));
  EXPECT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("lost events"), std::string::npos) << report.out;
  auto json_out = run_command(kMemtrail + " report --json " + shell_quote(run));
  ASSERT_EQ(json_out.exit_code, 0) << json_out.err;
  auto j = nlohmann::json::parse(json_out.out);
  // memtrail run counted the events the process made but never wrote (its
  // event tally) and ended the trace with them (abrupt_end_test.cpp).
  EXPECT_GT(j["trace"]["lost_events"]["count"], 0) << json_out.out.substr(0, 400);
  EXPECT_EQ(j["trace"]["lost_events"]["reasons"][0]["reason"], "process_ended")
      << json_out.out.substr(0, 400);

  auto check = run_command(kMemtrail + " check --max-leaked 1GiB " + shell_quote(run));
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
  EXPECT_NE((check.out + check.err).find("lost-events"), std::string::npos) << check.err;
  auto accepted =
      run_command(kMemtrail + " check --max-leaked 1GiB --accept-lost-events " + shell_quote(run));
  EXPECT_EQ(accepted.exit_code, 0) << accepted.out << accepted.err;
}

// ---- item 9: a worker forked after chroot -----------------------------------

// The run directory's path is gone from the worker's view; its trace is
// created through the directory's descriptor, inherited from the parent.
TEST(LostEvents, WorkerForkedAfterChrootWritesItsTrace) {
  TempDir dir;
  std::string run = dir / "t";
  auto r = run_command(kMemtrail + " run -o " + shell_quote(run) + " -- " + CHROOT_WORKER_BIN +
                       " " + shell_quote(dir / "empty"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  if (r.out.rfind("no chroot: ", 0) == 0) GTEST_SKIP() << r.out;  // not root, or no CAP_SYS_CHROOT
  EXPECT_EQ(r.out, "worker ok\n");
  EXPECT_EQ(r.err.find("cannot create"), std::string::npos) << r.err;
  auto traces = run_traces(run);
  ASSERT_EQ(traces.size(), 2u) << r.err;
  std::uint64_t worker_allocs = 0;
  for (const auto& path : traces) {
    Counts t = read_counts(path);
    EXPECT_TRUE(t.result.complete) << path;
    worker_allocs += t.allocs[555];
  }
  EXPECT_EQ(worker_allocs, 100u);
  EXPECT_NE(r.err.find("trace written to"), std::string::npos) << r.err;
}

// ---- item 9: a worker forked after setuid ------------------------------------

// The worker (uid 65534) cannot create a file in root's run directory: run
// names its pid and why, exits non-zero, and never says "trace written".
TEST(LostEvents, WorkerForkedAfterSetuidIsSaidMissing) {
  TempDir dir;
  std::string run = dir / "t";
  auto plain = run_command(SETUID_WORKER_BIN);
  if (plain.out.rfind("no setuid: ", 0) == 0) GTEST_SKIP() << plain.out;  // not root
  auto r = run_command(kMemtrail + " run -o " + shell_quote(run) + " -- " + SETUID_WORKER_BIN);
  EXPECT_EQ(r.out, plain.out);
  EXPECT_EQ(r.out, "worker ok\n");
  EXPECT_NE(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("trace written"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("is not whole"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("missing: the trace of pid "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cannot create trace file: Permission denied"), std::string::npos) << r.err;
  ASSERT_EQ(run_traces(run).size(), 1u) << r.err;  // the parent's
  Counts t = read_counts(run_traces(run)[0]);
  EXPECT_TRUE(t.result.complete);
}

// ---- item 5: a nearly full file system ---------------------------------------

// A 3 MiB tmpfs for the test's lifetime (root only).
struct SmallTmpfs {
  std::string path;
  std::string error;  // non-empty: not mounted
  explicit SmallTmpfs(std::string where) : path(std::move(where)) {
    ::mkdir(path.c_str(), 0755);
    auto r = run_command("mount -t tmpfs -o size=3m tmpfs " + shell_quote(path));
    if (r.exit_code != 0) error = "cannot mount a 3 MiB tmpfs: " + r.err;
  }
  ~SmallTmpfs() {
    if (error.empty()) run_command("umount " + shell_quote(path));
  }
};

// The program's 2 MiB fit untraced; traced, the trace stops where the file
// system's reserve begins, and run, report, JSON and check say the loss.
TEST(LostEvents, NearlyFullFileSystemLeavesTheProgramItsSpace) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting a 3 MiB tmpfs needs root";
  TempDir dir;
  SmallTmpfs fs(dir / "fs");
  if (!fs.error.empty()) GTEST_SKIP() << fs.error;
  std::string out = fs.path + "/out", run = fs.path + "/t";
  auto plain = run_command(std::string(FULL_DISK_BIN) + " " + shell_quote(out));
  ASSERT_EQ(plain.exit_code, 0) << plain.out;
  ASSERT_EQ(plain.out, "wrote 2097152 bytes\n");
  std::remove(out.c_str());
  auto r = run_command(kMemtrail + " run -o " + shell_quote(run) + " -- " + FULL_DISK_BIN + " " +
                       shell_quote(out));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, plain.out);
  EXPECT_EQ(r.err.find("trace written"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("events lost: pid "), std::string::npos) << r.err;
  auto traces = run_traces(run);
  ASSERT_EQ(traces.size(), 1u) << r.err;
  Counts t = read_counts(traces[0]);
  ASSERT_TRUE(t.result.ok) << t.result.error;
  EXPECT_TRUE(t.result.complete);
  EXPECT_GT(t.lost, 0u);

  auto report = run_command(kMemtrail + " report " + shell_quote(run));
  EXPECT_NE(report.out.find("lost events            " + std::to_string(t.lost)), std::string::npos)
      << report.out;
  EXPECT_NE(report.out.find("file system had less than 1 MiB free"), std::string::npos)
      << report.out;
  auto json_out = run_command(kMemtrail + " report --json " + shell_quote(run));
  ASSERT_EQ(json_out.exit_code, 0) << json_out.err;
  auto lost = nlohmann::json::parse(json_out.out)["trace"]["lost_events"];
  EXPECT_EQ(lost["count"], t.lost);
  ASSERT_EQ(lost["reasons"].size(), 1u);
  EXPECT_EQ(lost["reasons"][0]["reason"], "disk_space");
  auto check = run_command(kMemtrail + " check --max-leaked 1GiB " + shell_quote(run));
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
  EXPECT_NE((check.out + check.err).find("lost-events"), std::string::npos) << check.err;
  auto accepted =
      run_command(kMemtrail + " check --max-leaked 1GiB --accept-lost-events " + shell_quote(run));
  EXPECT_EQ(accepted.exit_code, 0) << accepted.out << accepted.err;
}

// ---- item 9: a child exec'd with the tracer taken out of its environment ----

void expect_child_traced(const std::string& shape) {
  TempDir dir;
  memtrail::test::CommandResult r;
  std::string run = run_shape(dir, shape, &r);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "child done\nparent done, child ok\n");
  auto traces = run_traces(run);
  ASSERT_EQ(traces.size(), 3u) << r.err;  // parent, fork child, exec'd child
  std::uint64_t child_allocs = 0;
  for (const auto& path : traces) {
    Counts t = read_counts(path);
    EXPECT_TRUE(t.result.complete) << path;
    child_allocs += t.allocs[555];
  }
  EXPECT_EQ(child_allocs, 100u);
  EXPECT_NE(r.err.find("trace written to"), std::string::npos) << r.err;
}

TEST(LostEvents, ChildExecdWithoutLdPreloadIsTraced) {
  expect_child_traced("exec-unset");
}

TEST(LostEvents, ChildExecdAfterClearenvIsTraced) {
  expect_child_traced("exec-clear");
}

}  // namespace
