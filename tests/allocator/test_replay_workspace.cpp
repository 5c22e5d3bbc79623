// The workspace what-if replay (replay_workspace.hpp) on synthesized traces:
// iterations by marks and by scope entries, the thread rule, the unfinished
// last span, escaping blocks, FAIL spills and the errors.
#include <gtest/gtest.h>

#include "memtrail/alloc/errors.hpp"
#include "memtrail/alloc/replay.hpp"
#include "memtrail/alloc/replay_workspace.hpp"
#include "memtrail/trace_file.hpp"
#include "test_util.hpp"

namespace {

using namespace memtrail;
using namespace memtrail::alloc;

constexpr std::uint32_t kHeap = 1, kStep = 7, kScope = 3;

class Trace {
 public:
  explicit Trace(const std::string& path) : path_(path), w_(path, header()) {
    w_.add_thread(ThreadInfo{1, 1001, "main"});
    w_.add_thread(ThreadInfo{2, 1002, "worker"});
    w_.add_pool(PoolInfo{kHeap, 0, "malloc", PoolKind::heap, MemorySpace::host, -1});
    w_.add_string(kStep, "step");
  }
  void mark(std::uint32_t thread = 1) { add(EventKind::mark, thread, kStep); }
  void scope(EventKind kind) { add(kind, 1, kScope); }
  void alloc(std::uint64_t addr, std::uint64_t size, std::uint32_t thread = 1) {
    Event e = event(EventKind::alloc, thread);
    e.pool = kHeap;
    e.address = addr;
    e.size = e.requested = size;
    w_.add_event(e);
  }
  void free(std::uint64_t addr) {
    Event e = event(EventKind::free, 1);
    e.pool = kHeap;
    e.address = addr;
    w_.add_event(e);
  }
  TraceWriter& writer() { return w_; }
  const std::string& finish() {
    w_.finish();
    return path_;
  }

 private:
  static TraceHeader header() {
    TraceHeader h;
    h.pid = 42;
    h.command_line = "synthetic";
    return h;
  }
  Event event(EventKind kind, std::uint32_t thread) {
    Event e;
    e.time_ns = ++t_;
    e.kind = kind;
    e.thread = thread;
    return e;
  }
  void add(EventKind kind, std::uint32_t thread, std::uint64_t aux) {
    Event e = event(kind, thread);
    e.aux = aux;
    w_.add_event(e);
  }
  std::string path_;
  TraceWriter w_;
  std::uint64_t t_ = 0;
};

WorkspaceReplayResult replay(const std::string& path, const std::string& conf = "") {
  WorkspaceReplayOptions o;
  o.mark = "step";
  o.config = WorkspaceConfiguration::parse(conf);
  return replay_workspace(path, o);
}

// Three iterations between four marks (100 + 60 bytes each, the third 300 +
// 60); thread 2's mark and allocations are not the loop's; the 500 bytes
// after the last mark are no iteration; one block escapes iteration 2 and
// one iteration 3.
TEST(ReplayWorkspace, MarksBoundIterationsOnTheirThread) {
  memtrail::test::TempDir dir;
  Trace t(dir.path + "/marks.mtr");
  t.alloc(0x10, 1000);  // before the first mark: outside
  t.mark();
  t.alloc(0x100, 100);
  t.alloc(0x200, 60);
  t.free(0x100);
  t.free(0x200);
  t.mark();
  t.mark(2);              // another thread's mark: ignored
  t.alloc(0x900, 64, 2);  // another thread's allocation: outside
  t.alloc(0x100, 100);
  t.alloc(0x300, 60);  // never freed: escapes
  t.free(0x100);
  t.mark();
  t.alloc(0x100, 300);
  t.alloc(0x200, 60);
  t.free(0x200);
  t.mark();             // 0x100 (300 bytes) still live: escapes iteration 3
  t.alloc(0x400, 500);  // after the last mark: outside
  WorkspaceReplayResult r = replay(t.finish(), "policyAllocation:STRICT");
  EXPECT_FALSE(r.by_scope);
  EXPECT_EQ(r.iterations, 3u);
  EXPECT_EQ(r.allocations, 6u);
  EXPECT_EQ(r.bytes, 680u);
  EXPECT_EQ(r.allocations_outside, 3u);
  // STRICT learns iteration 1 exactly: 112 + 64 (16-byte rounding).
  EXPECT_EQ(r.learned_size, 176u);
  EXPECT_EQ(r.learned_after_iteration, 1u);
  EXPECT_EQ(r.peak_iteration_bytes, 304u + 64u);
  // Iteration 1 spills both (no buffer yet); iteration 3's 304 bytes spill,
  // its 64 then fit.
  EXPECT_EQ(r.spills, 3u);
  EXPECT_EQ(r.spills_after_learning, 1u);
  EXPECT_EQ(r.iterations_after_learning, 2u);
  EXPECT_EQ(r.recorded_allocations_after_learning, 4u);
  EXPECT_EQ(r.system_allocations_after_learning, 1u);
  EXPECT_DOUBLE_EQ(r.removed_per_iteration(), 2.0 - 0.5);
  EXPECT_EQ(r.escaping_allocations, 2u);
}

// A scope of the name wins over marks; nested entries are one iteration;
// under FAIL a request that does not fit is counted, not thrown.
TEST(ReplayWorkspace, ScopeEntriesAndFailPolicy) {
  memtrail::test::TempDir dir;
  Trace t(dir.path + "/scopes.mtr");
  t.writer().add_scope(ScopeInfo{kScope, "step", ScopeKind::iteration, 0});
  for (int i = 0; i < 3; ++i) {
    t.mark();  // ignored: the scope bounds the iterations
    t.scope(EventKind::scope_begin);
    t.alloc(0x100, 32);
    t.scope(EventKind::scope_begin);  // nested entry
    t.alloc(0x200, i == 2 ? 64 : 16);
    t.scope(EventKind::scope_end);
    t.free(0x100);
    t.free(0x200);
    t.scope(EventKind::scope_end);
  }
  WorkspaceReplayResult r =
      replay(t.finish(), "initialSize:48,policyAllocation:STRICT,policySpill:FAIL");
  EXPECT_TRUE(r.by_scope);
  EXPECT_EQ(r.iterations, 3u);
  EXPECT_EQ(r.allocations, 6u);
  EXPECT_EQ(r.iterations_after_learning, 3u);  // the initialSize buffer from the start
  EXPECT_EQ(r.failed_allocations, 1u);         // 32 + 64 > 48
  EXPECT_EQ(r.system_allocations_after_learning, 0u);
  EXPECT_EQ(r.escaping_allocations, 0u);
}

TEST(ReplayWorkspace, ErrorsNameTheProblem) {
  memtrail::test::TempDir dir;
  Trace t(dir.path + "/bad.mtr");
  t.alloc(0x10, 8);
  const std::string path = t.finish();
  try {
    replay(path);
    FAIL() << "no boundary";
  } catch (const ReplayError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": no scope or mark named 'step'");
  }
  WorkspaceReplayOptions o;
  o.mark = "step";
  o.pool = "nope";
  EXPECT_THROW(replay_workspace(path, o), ReplayError);
  EXPECT_THROW(replay(path, "minSize:2M,maxSize:1M"), ConfigError);
}

// A cut trace and one without its end marker read as in the trace replay
// (replay_read_status.cpp): refused without allow_partial with the same
// message, else replayed with the same warning.
TEST(ReplayWorkspace, CutAndUnfinishedTracesReadAsInTheTraceReplay) {
  memtrail::test::TempDir dir;
  Trace t(dir.path + "/whole.mtr");
  t.mark();
  t.alloc(0x100, 100);
  t.free(0x100);
  t.mark();
  t.writer().flush();
  const std::string unfinished =
      dir.file("unfinished.mtr", memtrail::test::slurp(dir.path + "/whole.mtr"));
  t.alloc(0x200, 50);
  t.free(0x200);
  t.mark();
  const std::string whole = memtrail::test::slurp(t.finish());
  const std::string cut = dir.file("cut.mtr", whole.substr(0, whole.size() - 7));

  WorkspaceReplayOptions o;
  o.mark = "step";
  std::string refused;
  try {
    ReplayScript::from_trace(cut, "malloc", false);
  } catch (const ReplayError& e) {
    refused = e.what();
  }
  EXPECT_EQ(refused.rfind(cut + ": cut file: ", 0), 0u) << refused;
  try {
    replay_workspace(cut, o);
    FAIL() << "a cut trace without allow_partial";
  } catch (const ReplayError& e) {
    EXPECT_EQ(std::string(e.what()), refused);
  }
  o.allow_partial = true;
  EXPECT_EQ(replay_workspace(cut, o).warning,
            ReplayScript::from_trace(cut, "malloc", true).warning);

  o.allow_partial = false;
  const std::string note = replay_workspace(unfinished, o).warning;
  EXPECT_NE(note.find("no end-of-trace marker"), std::string::npos) << note;
  EXPECT_EQ(note, ReplayScript::from_trace(unfinished, "malloc", false).warning);
}

}  // namespace
