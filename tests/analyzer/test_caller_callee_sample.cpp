// Caller/callee on traces recorded under `memtrail run` (symbolized, one
// heap pool): samples/leaks' documented figures, a recursive program's
// exact costs (each stack counted once per function), and both agreeing
// with the call trees for every function and edge.
#include <gtest/gtest.h>

#include <filesystem>

#include "caller_callee_agrees.hpp"
#include "cli_runner.hpp"
#include "memtrail/caller_callee.hpp"
#include "run_dir.hpp"
#include "trace_builder.hpp"

namespace memtrail {
namespace {

using test::memtrail;
using test::shell_quote;
using test::temp_trace;

struct RemovedAtEnd {
  std::string path;
  ~RemovedAtEnd() { std::filesystem::remove_all(path); }
};

// Traces `program` and returns its analysis (error set on failure).
Analysis traced(const std::string& program, const std::string& name) {
  const std::string run = temp_trace(name);
  const RemovedAtEnd cleanup{run};
  auto r = memtrail("run -o " + shell_quote(run) + " -- " + program);
  Analysis a;
  if (r.exit_code != 0) {
    a.error = "memtrail run failed: " + r.err;
    return a;
  }
  const std::string trace = test::only_trace(run);
  if (trace.empty()) {
    a.error = "no trace in " + run;
    return a;
  }
  return analyze(trace);
}

const FunctionCosts* function(const CallerCallee& cc, const std::string& name) {
  const std::uint32_t i = cc.find(name);
  return i == CallerCallee::kNone ? nullptr : &cc.functions[i];
}

const CallEdge* edge(const CallerCallee& cc, const std::vector<CallEdge>& edges,
                     const std::string& name) {
  for (const CallEdge& e : edges)
    if (cc.functions[e.function].symbol.name == name) return &e;
  return nullptr;
}

void expect_agrees_with_trees(const Analysis& a, const CallerCallee& cc) {
  EXPECT_EQ(test::caller_callee_disagreement(cc, build_call_tree(a, TreeDirection::top_down),
                                             build_call_tree(a, TreeDirection::bottom_up)),
            "");
}

TEST(CallerCalleeSamples, LeaksSampleFigures) {
  const Analysis a = traced(MEMTRAIL_LEAKS_BIN, "cc-leaks.run");
  ASSERT_TRUE(a.error.empty()) << a.error;
  const CallerCallee cc = build_caller_callee(a);
  expect_agrees_with_trees(a, cc);
  const FunctionCosts* temporaries = function(cc, "(anonymous namespace)::make_temporaries()");
  ASSERT_NE(temporaries, nullptr);
  EXPECT_EQ(temporaries->inclusive[TreeCost::temporary], 25u);
  const FunctionCosts* plain = function(cc, "(anonymous namespace)::leak_plain_mallocs()");
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(plain->inclusive[TreeCost::leaked], 600u);
  ASSERT_NE(edge(cc, plain->callers, "main"), nullptr);
  EXPECT_EQ(edge(cc, plain->callers, "main")->inclusive[TreeCost::leaked], 600u);
  EXPECT_EQ(cc.total[TreeCost::leaked], a.summary.leaked.bytes);
  EXPECT_EQ(cc.total[TreeCost::allocations], a.summary.allocations);
}

// descend(4): 5 levels of 100 B, and 1000 B from leaf_alloc at the deepest.
TEST(CallerCalleeSamples, RecursionIsCountedOncePerStack) {
  const Analysis a = traced(MEMTRAIL_RECURSIVE_BIN, "cc-recursive.run");
  ASSERT_TRUE(a.error.empty()) << a.error;
  const CallerCallee cc = build_caller_callee(a);
  expect_agrees_with_trees(a, cc);
  const FunctionCosts* descend = function(cc, "descend");
  ASSERT_NE(descend, nullptr);
  EXPECT_EQ(descend->inclusive[TreeCost::allocations], 6u);  // not 1 + 2 + ... + 5 + 5
  EXPECT_EQ(descend->inclusive[TreeCost::bytes], 1500u);
  EXPECT_EQ(descend->self[TreeCost::allocations], 5u);
  EXPECT_EQ(descend->self[TreeCost::bytes], 500u);
  const CallEdge* self_call = edge(cc, descend->callers, "descend");
  ASSERT_NE(self_call, nullptr);
  EXPECT_EQ(self_call->inclusive[TreeCost::bytes], 1400u);  // levels 2..5 and the leaf
  EXPECT_EQ(self_call->self[TreeCost::bytes], 400u);        // levels 2..5
  const CallEdge* from_main = edge(cc, descend->callers, "main");
  ASSERT_NE(from_main, nullptr);
  EXPECT_EQ(from_main->inclusive[TreeCost::bytes], 1500u);
  EXPECT_EQ(from_main->self[TreeCost::bytes], 100u);
  const CallEdge* leaf = edge(cc, descend->callees, "leaf_alloc");
  ASSERT_NE(leaf, nullptr);
  EXPECT_EQ(leaf->inclusive[TreeCost::bytes], 1000u);
  EXPECT_EQ(leaf->self[TreeCost::bytes], 1000u);
}

}  // namespace
}  // namespace memtrail
