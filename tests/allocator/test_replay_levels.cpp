// The replay engine's level hooks (memtrail-gui's What-if series): a trace's
// ops carry their events' times, ReplaySink::on_level sees every level the
// policy held (their maxima are the result's peaks), and the workspace replay
// reports the bytes its upstream holds as they change.
#include <gtest/gtest.h>

#include <algorithm>

#include "memtrail/alloc/replay.hpp"
#include "memtrail/alloc/replay_workspace.hpp"
#include "memtrail/trace_file.hpp"
#include "test_util.hpp"

namespace {

using namespace memtrail;
using namespace memtrail::alloc;

// Pool "heap": 3 allocations and 2 frees at times 10, 20, ...; a scope
// "step" around each of two iterations.
std::string writeTrace(const std::string& path) {
  TraceHeader h;
  h.command_line = "levels";
  TraceWriter w(path, h);
  w.add_thread(ThreadInfo{1, 1001, "main"});
  w.add_pool(PoolInfo{1, 0, "heap", PoolKind::heap, MemorySpace::host, -1});
  w.add_scope(ScopeInfo{3, "step", ScopeKind::user, 0});
  std::uint64_t t = 0;
  auto add = [&](EventKind kind, std::uint64_t address, std::uint64_t size, std::uint64_t aux = 0) {
    Event e;
    e.time_ns = t += 10;
    e.thread = 1;
    e.pool = kind == EventKind::scope_begin || kind == EventKind::scope_end ? 0 : 1;
    e.kind = kind;
    e.address = address;
    e.size = e.requested = size;
    e.aux = aux;
    w.add_event(e);
  };
  add(EventKind::scope_begin, 0, 0, 3);
  add(EventKind::alloc, 0x100, 1000);
  add(EventKind::alloc, 0x200, 3000);
  add(EventKind::free, 0x100, 0);
  add(EventKind::scope_end, 0, 0, 3);
  add(EventKind::scope_begin, 0, 0, 3);
  add(EventKind::alloc, 0x300, 500);
  add(EventKind::free, 0x300, 0);
  add(EventKind::scope_end, 0, 0, 3);
  w.finish();
  return path;
}

struct Levels final : ReplaySink {
  void on_stats(const ReplayOp&, const std::map<std::string, std::int64_t>&) override {}
  void on_oom(const ReplayOp&, const std::string&) override {}
  void on_level(std::uint64_t ops_done, std::uint64_t reserved, std::uint64_t allocated) override {
    done.push_back(ops_done);
    this->reserved.push_back(reserved);
    this->allocated.push_back(allocated);
  }
  std::vector<std::uint64_t> done, reserved, allocated;
};

TEST(ReplayLevels, TraceOpsCarryTheirTimes) {
  memtrail::test::TempDir dir;
  const ReplayScript script = ReplayScript::from_trace(writeTrace(dir.path + "/l.mtr"), "heap");
  ASSERT_EQ(script.ops.size(), 5u);
  EXPECT_EQ(script.op_time_ns, (std::vector<std::uint64_t>{20, 30, 40, 70, 80}));
}

TEST(ReplayLevels, OnLevelSeesEveryLevelAndItsMaximaArePeaks) {
  memtrail::test::TempDir dir;
  const ReplayScript script = ReplayScript::from_trace(writeTrace(dir.path + "/l.mtr"), "heap");
  for (ReplayAllocator a :
       {ReplayAllocator::caching, ReplayAllocator::bfc, ReplayAllocator::malloc}) {
    ReplayOptions o;
    o.allocator = a;
    Levels levels;
    const ReplayResult r = run_replay(script, o, &levels);
    ASSERT_EQ(levels.done.size(), script.ops.size() + 1);  // before the first op, then each
    for (std::size_t i = 0; i < levels.done.size(); ++i) EXPECT_EQ(levels.done[i], i);
    EXPECT_EQ(*std::max_element(levels.reserved.begin(), levels.reserved.end()), r.peak_reserved);
    EXPECT_EQ(*std::max_element(levels.allocated.begin(), levels.allocated.end()),
              r.peak_allocated);
    EXPECT_EQ(levels.reserved.back(), r.final_reserved);
  }
  // Malloc: exactly the live bytes after each op.
  ReplayOptions o;
  o.allocator = ReplayAllocator::malloc;
  Levels levels;
  run_replay(script, o, &levels);
  EXPECT_EQ(levels.reserved, (std::vector<std::uint64_t>{0, 1000, 4000, 3000, 3500, 3000}));
}

TEST(ReplayLevels, WorkspaceReportsItsUpstreamBytes) {
  memtrail::test::TempDir dir;
  WorkspaceReplayOptions o;
  o.pool = "heap";
  o.mark = "step";
  o.config = WorkspaceConfiguration::parse("policyAllocation:STRICT");
  std::vector<std::pair<std::uint64_t, std::uint64_t>> seen;
  o.on_reserved = [&](std::uint64_t t, std::uint64_t bytes) { seen.emplace_back(t, bytes); };
  const WorkspaceReplayResult r = replay_workspace(writeTrace(dir.path + "/l.mtr"), o);
  ASSERT_FALSE(seen.empty());
  for (std::size_t i = 1; i < seen.size(); ++i) {
    EXPECT_LE(seen[i - 1].first, seen[i].first);
    EXPECT_NE(seen[i - 1].second, seen[i].second);  // only changes are reported
  }
  // After learning, the workspace holds its buffer from the upstream.
  EXPECT_GT(r.learned_size, 0u);
  EXPECT_GE(seen.back().second, r.learned_size);
}

}  // namespace
