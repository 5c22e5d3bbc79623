// The workspaces section (memtrail/workspaces.hpp) on synthesized traces
// whose every number is known: cycles, learning, spills and their sites,
// system allocations per cycle after learning at the heap level (preload
// traces) and at the upstream level (no heap pool).
#include <gtest/gtest.h>

#include "memtrail/analysis.hpp"
#include "memtrail/report_json.hpp"
#include "memtrail/report_text.hpp"
#include "trace_builder.hpp"

namespace memtrail {
namespace {

using test::temp_trace;
using test::TraceBuilder;

constexpr std::uint32_t kHeap = 1, kSys = 2, kWs = 3, kScope = 1;

void ws_event(TraceBuilder& b, std::uint64_t t, EventKind kind, std::uint64_t size,
              std::uint32_t stack = 0, std::uint64_t address = 0) {
  Event e;
  e.time_ns = t;
  e.kind = kind;
  e.pool = kWs;
  e.thread = 1;
  e.aux = kScope;
  e.size = size;
  e.stack = stack;
  e.address = address;
  b.writer().add_event(e);
}

// A spill as the Workspace records it: the upstream's alloc, the workspace
// pool's alloc, the spill event (same stack).
void spill(TraceBuilder& b, std::uint64_t& t, std::uint64_t addr, std::uint64_t size,
           std::uint32_t stack) {
  b.alloc(t++, kSys, addr, size, stack);
  b.alloc(t++, kWs, addr, size, stack);
  ws_event(b, t++, EventKind::spill, size, stack, addr);
}

// Three cycles of workspace W: cycle 1 spills 64 + 32 bytes and learns 123
// bytes; cycle 2 reuses both; cycle 3 reuses 64 and spills 200 from the
// first site. With `heap`, each spill's posix_memalign is a heap alloc too,
// plus one other heap alloc in cycle 1, and a heap alloc on thread 2 during
// cycle 3 (not the cycle's thread).
std::string build(TraceBuilder& b, bool heap) {
  if (heap) b.pool(kHeap, "malloc", PoolKind::heap);
  b.pool(kSys, "system heap", PoolKind::system);
  b.pool(kWs, "W", PoolKind::workspace, kSys);
  b.writer().add_scope(ScopeInfo{kScope, "W", ScopeKind::workspace, kWs});
  b.stack(5, 0, 0x1000);
  b.stack(6, 0, 0x2000);
  std::uint64_t t = 10;
  auto heap_alloc = [&](std::uint64_t addr, std::uint32_t thread = 1) {
    if (heap) b.alloc(t++, kHeap, addr, 16, 0, thread);
  };
  b.scope(t++, EventKind::scope_begin, kScope);  // cycle 1
  heap_alloc(0x100);
  heap_alloc(0xA000);
  spill(b, t, 0xA000, 64, 5);
  heap_alloc(0xB000);
  spill(b, t, 0xB000, 32, 6);
  ws_event(b, t++, EventKind::workspace_learn, 123);
  b.scope(t++, EventKind::scope_end, kScope);
  b.scope(t++, EventKind::scope_begin, kScope);  // cycle 2
  b.reuse(t++, kWs, 0xC000, 64, 5);
  b.reuse(t++, kWs, 0xC040, 32, 6);
  b.scope(t++, EventKind::scope_end, kScope);
  b.scope(t++, EventKind::scope_begin, kScope);  // cycle 3
  b.reuse(t++, kWs, 0xC000, 64, 5);
  heap_alloc(0x200, 2);
  heap_alloc(0xD000);
  spill(b, t, 0xD000, 200, 5);
  b.scope(t++, EventKind::scope_end, kScope);
  return b.finish();
}

TEST(Workspaces, CyclesLearningSpillsAndSystemAllocationsAreExact) {
  TraceBuilder b(temp_trace("ws-heap.mtr"));
  AnalysisOptions o;
  o.symbolize = false;
  Analysis a = analyze(build(b, true), o);
  ASSERT_TRUE(a.error.empty()) << a.error;
  ASSERT_EQ(a.workspaces.size(), 1u);
  const WorkspaceReport& w = a.workspaces[0];
  EXPECT_EQ(w.name, "W");
  EXPECT_EQ(w.cycles, 3u);
  EXPECT_EQ(w.allocations, 6u);  // 3 spills + 3 reuses
  EXPECT_EQ(w.reuses, 3u);
  EXPECT_DOUBLE_EQ(w.reuse_ratio, 0.5);
  EXPECT_EQ(w.learned_size, 123u);
  EXPECT_EQ(w.learn_events, 1u);
  EXPECT_EQ(w.learned_in_cycle, 1u);
  EXPECT_EQ(w.peak_cycle_bytes, 264u);  // cycle 3: 64 + 200
  EXPECT_EQ(w.spills, 3u);
  EXPECT_EQ(w.spilled_bytes, 296u);
  ASSERT_EQ(w.spill_sites.size(), 2u);
  EXPECT_EQ(w.spill_sites[0].stack.value, 5u);
  EXPECT_EQ(w.spill_sites[0].spills, 2u);
  EXPECT_EQ(w.spill_sites[0].bytes, 264u);
  ASSERT_NE(w.spill_sites[0].site, WorkspaceSpillSite::kNoSite);
  EXPECT_EQ(at(a.sites, w.spill_sites[0].site).pool.value, kWs);
  EXPECT_EQ(w.spill_sites[1].stack.value, 6u);
  EXPECT_EQ(w.spill_sites[1].bytes, 32u);
  EXPECT_EQ(w.cycles_after_learning, 2u);
  EXPECT_EQ(w.spills_after_learning, 1u);
  // Heap level: cycle 1 made 3 heap allocations, cycle 3 one on its thread.
  EXPECT_EQ(w.system_allocations, 4u);
  EXPECT_EQ(w.system_allocations_after_learning, 1u);
  EXPECT_EQ(w.cycles_with_system_allocations_after_learning, 1u);
  EXPECT_EQ(w.max_system_allocations_per_cycle_after_learning, 1u);
  EXPECT_DOUBLE_EQ(w.system_allocations_per_cycle_after_learning, 0.5);

  nlohmann::json j = to_report_json(a);
  ASSERT_EQ(j["workspaces"].size(), 1u);
  EXPECT_EQ(j["workspaces"][0]["learned_size"], 123);
  EXPECT_EQ(j["workspaces"][0]["spill_sites"][0]["bytes"], 264);
  EXPECT_EQ(j["workspaces"][0]["system_allocations_after_learning"], 1);
  EXPECT_NE(report_text(a, {}).find("W: 3 cycles, learned 123 B in cycle 1"), std::string::npos)
      << report_text(a, {});
}

// Recorded in-process (no preload): the allocator stack's upstream pools
// are the system level, so each spill counts once.
TEST(Workspaces, WithoutHeapPoolUpstreamAllocationsAreTheSystemAllocations) {
  TraceBuilder b(temp_trace("ws-upstream.mtr"));
  AnalysisOptions o;
  o.symbolize = false;
  Analysis a = analyze(build(b, false), o);
  ASSERT_TRUE(a.error.empty()) << a.error;
  ASSERT_EQ(a.workspaces.size(), 1u);
  const WorkspaceReport& w = a.workspaces[0];
  EXPECT_EQ(w.system_allocations, 3u);
  EXPECT_EQ(w.system_allocations_after_learning, 1u);
  EXPECT_DOUBLE_EQ(w.system_allocations_per_cycle_after_learning, 0.5);
}

// A trace without workspaces has no section, and no `workspaces` key.
TEST(Workspaces, NoWorkspaceNoSection) {
  TraceBuilder b(temp_trace("ws-none.mtr"));
  b.pool(kHeap, "malloc", PoolKind::heap);
  b.alloc(1, kHeap, 0x10, 32);
  AnalysisOptions o;
  o.symbolize = false;
  Analysis a = analyze(b.finish(), o);
  EXPECT_TRUE(a.workspaces.empty());
  EXPECT_FALSE(to_report_json(a).contains("workspaces"));
  EXPECT_EQ(report_text(a, {}).find("WORKSPACES"), std::string::npos);
}

}  // namespace
}  // namespace memtrail
