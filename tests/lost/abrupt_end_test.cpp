// A process that ends abruptly, with events still in the tracer's buffers
// (issue 26, item 8): a raw exit_group from two threads' worth of events, a
// Go program ending by os.Exit (its runtime's exit_group), a process
// SIGKILLed mid-run. Every event it made is in its trace, or the loss is
// counted to the event and said by run, report (text and JSON) and check.
#include <gtest/gtest.h>

#include <unistd.h>

#include <string>

#include <nlohmann/json.hpp>

#include "memtrail/trace_file.hpp"
#include "one_cpu.hpp"
#include "run_command.hpp"
#include "run_dir.hpp"
#include "temp_dir.hpp"
#include "toolchains.hpp"

namespace {

using memtrail::test::CommandResult;
using memtrail::test::go_build_offline;
using memtrail::test::have_tool;
using memtrail::test::only_trace;
using memtrail::test::run_command;
using memtrail::test::shell_quote;

const std::string kMemtrail = MEMTRAIL_BIN;
const std::string kAbruptEnd = ABRUPT_END_BIN;
const std::string kGoSource = ABRUPT_GO_SOURCE;

constexpr std::uint64_t kBlockSize = 44, kMarkerSize = 4444;

struct TempDir : memtrail::test::TempDir {
  TempDir() : memtrail::test::TempDir("abrupt") {}
};

struct Counts : memtrail::TraceVisitor {
  memtrail::ReadResult result;
  std::uint64_t blocks = 0, markers = 0, lost_ended = 0, lost_other = 0;
  void on_event(const memtrail::Event& e) override {
    if (e.kind == memtrail::EventKind::alloc) {
      blocks += e.size == kBlockSize;
      markers += e.size == kMarkerSize;
    } else if (e.kind == memtrail::EventKind::mark &&
               e.detail == static_cast<std::uint8_t>(memtrail::MarkDetail::lost)) {
      (e.requested == static_cast<std::uint64_t>(memtrail::LostReason::process_ended)
           ? lost_ended
           : lost_other) += e.size;
    }
  }
};

// `made`: the 44-byte blocks the program made. `exact`: nothing but them is
// made after the 4444-byte marker, so a trace holding the marker is short
// of exactly the lost ones.
// `trace`: the process's trace; `target`: what report and check read (the
// run directory, or the trace itself where the run has several).
void expect_every_event_or_a_counted_loss(const std::string& trace, const std::string& target,
                                          const CommandResult& r, std::uint64_t made, bool exact) {
  ASSERT_FALSE(trace.empty()) << r.err;
  Counts t;
  memtrail::TraceReader reader(trace);
  t.result = reader.read(t);
  ASSERT_TRUE(t.result.ok) << t.result.error;
  EXPECT_EQ(t.lost_other, 0u);
  // Either whole with every event, or ended by run with the loss counted.
  EXPECT_TRUE(t.result.complete) << "no end-of-trace marker: " << r.err;
  if (t.lost_ended == 0) {
    EXPECT_EQ(t.blocks, made);
    EXPECT_NE(r.err.find("trace written"), std::string::npos) << r.err;
    return;
  }
  const std::uint64_t lost = t.lost_ended;
  if (exact && t.markers == 1)
    EXPECT_EQ(t.blocks + lost, made) << "trace " << t.blocks << ", lost " << lost;
  else
    EXPECT_GE(t.blocks + lost, made) << "trace " << t.blocks << ", lost " << lost;
  EXPECT_LE(t.blocks + lost, made + (exact ? 0 : 2000))
      << "trace " << t.blocks << ", lost " << lost;

  const std::string counted = std::to_string(lost) + " events";
  EXPECT_EQ(r.err.find("trace written"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("events lost: pid "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(counted + " not written to"), std::string::npos) << r.err;

  auto report = run_command(kMemtrail + " report " + shell_quote(target));
  EXPECT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(
      report.out.find("lost events            " + std::to_string(lost) + " not in this trace"),
      std::string::npos)
      << report.out.substr(0, 1500);
  auto json_out = run_command(kMemtrail + " report --json " + shell_quote(target));
  ASSERT_EQ(json_out.exit_code, 0) << json_out.err;
  auto j = nlohmann::json::parse(json_out.out);
  const auto& l = j["trace"]["lost_events"];
  EXPECT_EQ(l["count"], lost) << l.dump();
  ASSERT_EQ(l["reasons"].size(), 1u) << l.dump();
  EXPECT_EQ(l["reasons"][0]["reason"], "process_ended") << l.dump();
  EXPECT_EQ(l["reasons"][0]["count"], lost) << l.dump();

  auto check = run_command(kMemtrail + " check --max-leaked 1GiB " + shell_quote(target));
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
  EXPECT_NE((check.out + check.err).find("FAIL lost-events: " + counted), std::string::npos)
      << check.out << check.err;
  auto accepted = run_command(kMemtrail + " check --max-leaked 1GiB --accept-lost-events " +
                              shell_quote(target));
  EXPECT_EQ(accepted.exit_code, 0) << accepted.out << accepted.err;
}

CommandResult run_traced(const std::string& run, const std::string& command) {
  return run_command(kMemtrail + " run -o " + shell_quote(run) + " -- " + command);
}

TEST(AbruptEnd, RawExitGroupFromTwoThreadsCountsEveryEvent) {
  TempDir dir;
  std::string run = dir / "t";
  CommandResult r = run_traced(run, kAbruptEnd + " exit_group 100000");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_every_event_or_a_counted_loss(only_trace(run), run, r, 200000, true);
}

// On one CPU the program's threads drain their own events
// (tracer/src/drain_sharing.cpp), and a chunk one of them closes waits for
// the writer thread to write it. 150,000 blocks each: more than a chunk
// holds, so one closes so. The count once written was the drain's as of
// the write, with the events encoded since into the next chunk: those
// were lost uncounted (11 runs in 12, before the count was taken as the
// chunk closed).
TEST(AbruptEnd, RawExitGroupWhileProgramThreadsDrainCountsEveryEvent) {
  TempDir dir;
  std::string run = dir / "t";
  CommandResult r;
  {
    memtrail::test::OneCpu one_cpu;  // inherited by memtrail run and the program
    ASSERT_TRUE(one_cpu.ok());
    r = run_traced(run, kAbruptEnd + " exit_group 150000");
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_every_event_or_a_counted_loss(only_trace(run), run, r, 300000, true);
}

TEST(AbruptEnd, SigkillMidRunCountsEveryEvent) {
  TempDir dir;
  std::string run = dir / "t";
  CommandResult r = run_traced(run, kAbruptEnd + " sigkill 100000");
  ASSERT_EQ(r.exit_code, 128 + 9) << r.err;  // memtrail run dies of the program's signal
  EXPECT_NE(r.err.find("killed by SIGKILL"), std::string::npos) << r.err;
  expect_every_event_or_a_counted_loss(only_trace(run), run, r, 200000, true);
}

// A forked child SIGKILLed while its parent goes on and exits normally: the
// parent's trace is whole, the child's loss is counted (it made nothing
// but the N blocks after the fork).
TEST(AbruptEnd, ForkedChildKilledCountsEveryEvent) {
  TempDir dir;
  std::string run = dir / "t";
  CommandResult r = run_traced(run, kAbruptEnd + " fork_sigkill 50000");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto traces = memtrail::test::run_traces(run);
  ASSERT_EQ(traces.size(), 2u) << r.err;
  std::string child;
  for (const std::string& t : traces) {
    Counts c;
    memtrail::TraceReader reader(t);
    c.result = reader.read(c);
    EXPECT_TRUE(c.result.complete) << t;
    if (c.lost_ended != 0 || c.blocks != 0) child = t;
  }
  ASSERT_FALSE(child.empty()) << r.err;
  expect_every_event_or_a_counted_loss(child, child, r, 50000, true);
}

// Go's runtime ends a program (os.Exit, or main returning) with its own
// exit_group: no atexit handler runs. Its threads may make a few events of
// their own after the marker, so the count is checked within 2000.
TEST(AbruptEnd, GoProgramEndingByOsExitCountsEveryEvent) {
  if (!have_tool("go") || !have_tool("gcc"))
    GTEST_SKIP() << "go/gcc not installed (Debian packages golang-go, gcc)";
  TempDir dir;
  auto build = go_build_offline(dir.path(), kGoSource, dir / "abrupt_go");
  ASSERT_EQ(build.exit_code, 0) << build.err;
  std::string run = dir / "t";
  CommandResult r = run_traced(run, shell_quote(dir / "abrupt_go"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_every_event_or_a_counted_loss(only_trace(run), run, r, 320000, false);
}

}  // namespace
