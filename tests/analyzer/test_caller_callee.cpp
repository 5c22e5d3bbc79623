// Caller/callee (memtrail/caller_callee.hpp) on synthesized traces: exact
// self, inclusive and per-edge costs with a recursive function counted once
// per stack, the same numbers derived from the call trees, "[pool]" never a
// function, upstream pools left out, and a range's own figures.
#include <gtest/gtest.h>

#include "caller_callee_agrees.hpp"
#include "memtrail/caller_callee.hpp"
#include "trace_builder.hpp"
#include "unsymbolized_analysis.hpp"

namespace memtrail {
namespace {

using test::analyze_unsymbolized;
using test::temp_trace;
using test::TraceBuilder;

// main (0x10) calls f (0x20), which recurses once and calls g (0x30); main
// also calls g directly. One allocation has no stack.
//   t=10  A main;f;f     100 B  leaked
//   t=20  B main;f;f;g   200 B  freed at 21: temporary
//   t=30  C main;g       300 B  freed at 90
//   t=40  D main;f        50 B  leaked
//   t=50  E (no stack)     7 B  leaked
void write_recursive_trace(TraceBuilder& b, bool second_pool = false) {
  b.pool(1, "malloc", PoolKind::heap);
  if (second_pool) b.pool(2, "arena", PoolKind::heap);
  b.stack(1, 0, 0x10);
  b.stack(2, 1, 0x20);
  b.stack(3, 2, 0x20);
  b.stack(4, 3, 0x30);
  b.stack(5, 1, 0x30);
  b.alloc(10, 1, 0xA0, 100, 3);
  b.alloc(20, 1, 0xB0, 200, 4);
  b.free(21, 1, 0xB0);
  b.alloc(30, second_pool ? 2 : 1, 0xC0, 300, 5);
  b.alloc(40, 1, 0xD0, 50, 2);
  b.alloc(50, 1, 0xE0, 7, 0);
  b.free(90, second_pool ? 2 : 1, 0xC0);
}

const FunctionCosts& function(const CallerCallee& cc, const std::string& name) {
  const std::uint32_t i = cc.find(name);
  EXPECT_NE(i, CallerCallee::kNone) << name;
  static const FunctionCosts none;
  return i == CallerCallee::kNone ? none : cc.functions[i];
}

// The edge to `name` in `edges`, or a zero edge.
CallEdge edge(const CallerCallee& cc, const std::vector<CallEdge>& edges, const std::string& name) {
  for (const CallEdge& e : edges)
    if (cc.functions[e.function].symbol.name == name) return e;
  ADD_FAILURE() << "no edge to " << name;
  return {};
}

std::vector<std::string> names(const CallerCallee& cc, const std::vector<CallEdge>& edges) {
  std::vector<std::string> out;
  for (const CallEdge& e : edges) out.push_back(cc.functions[e.function].symbol.name);
  std::sort(out.begin(), out.end());
  return out;
}

std::uint64_t bytes(const TreeCosts& c) {
  return c[TreeCost::bytes];
}
std::uint64_t calls(const TreeCosts& c) {
  return c[TreeCost::allocations];
}

TEST(CallerCallee, RecursionCountsEachStackOnce) {
  TraceBuilder b(temp_trace("cc-recursion.mtr"));
  write_recursive_trace(b);
  const CallerCallee cc = build_caller_callee(analyze_unsymbolized(b.finish()));
  EXPECT_EQ(bytes(cc.total), 657u);
  EXPECT_EQ(calls(cc.total), 5u);
  EXPECT_EQ(cc.functions.size(), 4u);  // main, f, g, (no stack)
  EXPECT_EQ(cc.edge_count(), 4u);      // main -> f, f -> f, f -> g, main -> g
  EXPECT_GT(cc.memory_bytes(), 4 * sizeof(FunctionCosts));

  const FunctionCosts& f = function(cc, "0x20");
  EXPECT_EQ(bytes(f.self), 150u);       // A and D end in f
  EXPECT_EQ(bytes(f.inclusive), 350u);  // A, B, D once each, not 100 + 200 twice
  EXPECT_EQ(calls(f.inclusive), 3u);
  EXPECT_EQ(f.inclusive[TreeCost::temporary], 1u);  // B
  EXPECT_EQ(f.inclusive[TreeCost::leaked], 150u);   // A, D
  EXPECT_EQ(names(cc, f.callers), (std::vector<std::string>{"0x10", "0x20"}));
  EXPECT_EQ(names(cc, f.callees), (std::vector<std::string>{"0x20", "0x30"}));
  EXPECT_EQ(bytes(edge(cc, f.callers, "0x10").inclusive), 350u);  // A, B, D
  EXPECT_EQ(bytes(edge(cc, f.callers, "0x10").self), 50u);        // D ends in f from main
  EXPECT_EQ(bytes(edge(cc, f.callers, "0x20").inclusive), 300u);  // A, B
  EXPECT_EQ(bytes(edge(cc, f.callers, "0x20").self), 100u);       // A
  EXPECT_EQ(bytes(edge(cc, f.callees, "0x20").inclusive), 300u);  // the same edge
  EXPECT_EQ(bytes(edge(cc, f.callees, "0x30").inclusive), 200u);  // B
  EXPECT_EQ(bytes(edge(cc, f.callees, "0x30").self), 200u);

  const FunctionCosts& g = function(cc, "0x30");
  EXPECT_EQ(bytes(g.self), 500u);
  EXPECT_EQ(bytes(g.inclusive), 500u);
  EXPECT_TRUE(g.callees.empty());
  EXPECT_EQ(bytes(edge(cc, g.callers, "0x10").inclusive), 300u);
  EXPECT_EQ(bytes(edge(cc, g.callers, "0x20").inclusive), 200u);

  const FunctionCosts& main = function(cc, "0x10");
  EXPECT_EQ(bytes(main.self), 0u);
  EXPECT_EQ(bytes(main.inclusive), 650u);
  EXPECT_EQ(main.inclusive[TreeCost::leaked], 150u);
  EXPECT_TRUE(main.callers.empty());
  EXPECT_EQ(names(cc, main.callees), (std::vector<std::string>{"0x20", "0x30"}));

  const FunctionCosts& none = function(cc, "(no stack)");
  EXPECT_EQ(bytes(none.self), 7u);
  EXPECT_EQ(bytes(none.inclusive), 7u);
}

TEST(CallerCallee, AgreesWithTheCallTrees) {
  for (bool two_pools : {false, true}) {
    SCOPED_TRACE(two_pools ? "two pools" : "one pool");
    TraceBuilder b(temp_trace("cc-trees.mtr"));
    write_recursive_trace(b, two_pools);
    const Analysis a = analyze_unsymbolized(b.finish());
    const CallerCallee cc = build_caller_callee(a);
    const CallTree down = build_call_tree(a, TreeDirection::top_down);
    const CallTree up = build_call_tree(a, TreeDirection::bottom_up);
    EXPECT_EQ(test::caller_callee_disagreement(cc, down, up), "");
    EXPECT_EQ(cc.find("[malloc]"), CallerCallee::kNone);  // a pool is no function
    EXPECT_EQ(cc.find("[arena]"), CallerCallee::kNone);
    TreeCosts self_sum;
    for (const FunctionCosts& f : cc.functions) self_sum += f.self;
    EXPECT_EQ(self_sum, cc.total);
  }
}

TEST(CallerCallee, RangeHasTheRangesCosts) {
  TraceBuilder b(temp_trace("cc-range.mtr"));
  write_recursive_trace(b);
  const std::string& path = b.finish();
  // [15, 45): B, C and D.
  const Analysis a = analyze_unsymbolized(path, 15, 45);
  const CallerCallee cc = build_caller_callee(a);
  EXPECT_EQ(calls(cc.total), 3u);
  EXPECT_EQ(bytes(function(cc, "0x20").inclusive), 250u);  // B, D
  EXPECT_EQ(bytes(function(cc, "0x20").self), 50u);        // D
  EXPECT_EQ(bytes(edge(cc, function(cc, "0x20").callers, "0x20").inclusive), 200u);
  EXPECT_EQ(cc.find("(no stack)"), CallerCallee::kNone);
  EXPECT_EQ(test::caller_callee_disagreement(cc, build_call_tree(a, TreeDirection::top_down),
                                             build_call_tree(a, TreeDirection::bottom_up)),
            "");
}

TEST(CallerCallee, UpstreamPoolsAreLeftOut) {
  TraceBuilder b(temp_trace("cc-upstream.mtr"));
  b.pool(1, "system", PoolKind::system);
  b.pool(2, "cache", PoolKind::caching, 1);
  b.stack(1, 0, 0x10);
  b.stack(2, 1, 0x20);
  b.alloc(10, 1, 0x100000, 4096, 1);  // the system pool hands the cache a segment
  b.segment(10, EventKind::segment_reserve, 2, 0x100000, 4096);
  b.alloc(20, 2, 0x100000, 512, 2);
  const CallerCallee cc = build_caller_callee(analyze_unsymbolized(b.finish()));
  EXPECT_EQ(bytes(cc.total), 512u);
  EXPECT_EQ(bytes(function(cc, "0x10").self), 0u);  // its 4096 B are the upstream pool's
  EXPECT_EQ(bytes(function(cc, "0x10").inclusive), 512u);
}

TEST(CallerCallee, CancelledBuildIsEmpty) {
  TraceBuilder b(temp_trace("cc-cancel.mtr"));
  b.pool(1, "malloc", PoolKind::heap);
  for (std::uint32_t s = 1; s <= 5000; ++s) b.stack(s, 0, 0x1000 + 16 * s);
  for (std::uint32_t s = 1; s <= 5000; ++s) b.alloc(s, 1, 0x100000 + 64 * s, 8, s);
  AnalysisOptions o;
  o.symbolize = false;
  o.symbol_cache = false;
  o.group_by_address = true;
  const Analysis a = analyze(b.finish(), o);
  EXPECT_EQ(build_caller_callee(a).functions.size(), 5000u);
  const CallerCallee stopped = build_caller_callee(a, [] { return false; });
  EXPECT_TRUE(stopped.functions.empty());
  EXPECT_EQ(stopped.total, TreeCosts{});
}

}  // namespace
}  // namespace memtrail
