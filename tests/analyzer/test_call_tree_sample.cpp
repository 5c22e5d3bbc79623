// Call trees on traces the project's samples record under `memtrail run`
// (symbolized, one heap pool, deep stacks): both directions hold exactly the
// stacks and sums of `memtrail export --format folded` for every cost.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli_runner.hpp"
#include "folded_lines.hpp"
#include "memtrail/call_tree.hpp"
#include "run_dir.hpp"
#include "trace_builder.hpp"

namespace memtrail {
namespace {

using test::memtrail;
using test::shell_quote;
using test::temp_trace;

// Removes the run directory however the test ends: a failed ASSERT returns
// early, and the directory must not stay in /tmp.
struct RemovedAtEnd {
  std::string path;
  ~RemovedAtEnd() { std::filesystem::remove_all(path); }
};

void expect_trees_equal_folded(const std::string& program, const std::string& name) {
  const std::string run = temp_trace(name);
  const RemovedAtEnd cleanup{run};
  auto r = memtrail("run -o " + shell_quote(run) + " -- " + program);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string trace = test::only_trace(run);
  ASSERT_FALSE(trace.empty()) << run;
  Analysis a = analyze(trace);
  ASSERT_TRUE(a.error.empty()) << a.error;
  CallTree down = build_call_tree(a, TreeDirection::top_down);
  CallTree up = build_call_tree(a, TreeDirection::bottom_up);
  for (TreeCost c : {TreeCost::peak, TreeCost::allocations, TreeCost::temporary, TreeCost::leaked,
                     TreeCost::bytes}) {
    SCOPED_TRACE(tree_cost_name(c));
    auto f = memtrail("export --format folded --cost " + std::string(tree_cost_name(c)) + " " +
                      shell_quote(trace));
    ASSERT_EQ(f.exit_code, 0) << f.err;
    const test::FoldedLines want = test::parse_folded(f.out);
    ASSERT_FALSE(want.empty());
    EXPECT_EQ(test::tree_lines(down, c), want);
    EXPECT_EQ(test::tree_lines(up, c), want);
    std::uint64_t total = 0;
    for (const auto& [path, v] : want) total += v;
    EXPECT_EQ(down.total()[c], total);
    EXPECT_EQ(up.total()[c], total);
  }
  EXPECT_EQ(down.total()[TreeCost::allocations], a.summary.allocations);
  EXPECT_EQ(down.total()[TreeCost::temporary], a.summary.temporary_allocations);
  EXPECT_EQ(down.total()[TreeCost::leaked], a.summary.leaked.bytes);
}

TEST(CallTreeSamples, ChurnTreesEqualFoldedExport) {
  expect_trees_equal_folded(std::string(MEMTRAIL_CHURN_BIN) + " 20000", "tree-churn.run");
}

TEST(CallTreeSamples, LeaksTreesEqualFoldedExport) {
  expect_trees_equal_folded(MEMTRAIL_LEAKS_BIN, "tree-leaks.run");
}

}  // namespace
}  // namespace memtrail
