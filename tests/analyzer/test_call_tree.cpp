// Call trees (memtrail/call_tree.hpp) on a synthesized trace: top-down and
// bottom-up hold exactly the stacks `memtrail export --format folded` writes,
// for every cost, for the whole trace and for a range; self and inclusive
// costs add up; upstream pools and zero-cost sites stay out.
#include <gtest/gtest.h>

#include "cli_runner.hpp"
#include "folded_lines.hpp"
#include "memtrail/call_tree.hpp"
#include "trace_builder.hpp"
#include "unsymbolized_analysis.hpp"

namespace memtrail {
namespace {

using test::analyze_unsymbolized;
using test::memtrail;
using test::shell_quote;
using test::temp_trace;
using test::TraceBuilder;

constexpr TreeCost kAllCosts[] = {TreeCost::peak, TreeCost::allocations, TreeCost::temporary,
                                  TreeCost::leaked, TreeCost::bytes};

// Two leaf pools ("malloc", "cache"), an upstream "system" under the cache,
// stacks that share callers (0x10 calls 0x20 and 0x30; 0x30 calls 0x40 from
// two stacks), one alloc without a stack, temporaries, frees and leaks.
void write_trace(TraceBuilder& b) {
  b.pool(1, "malloc", PoolKind::heap);
  b.pool(2, "system", PoolKind::system);
  b.pool(3, "cache", PoolKind::caching, 2);
  b.stack(1, 0, 0x10);  // main
  b.stack(2, 1, 0x20);  // main -> 0x20
  b.stack(3, 1, 0x30);  // main -> 0x30
  b.stack(4, 3, 0x40);  // main -> 0x30 -> 0x40
  b.stack(5, 2, 0x40);  // main -> 0x20 -> 0x40 (same function, another caller)
  b.alloc(10, 1, 0xA0, 100, 2);
  b.alloc(20, 1, 0xB0, 200, 4);
  b.free(30, 1, 0xB0);  // temporary
  b.alloc(40, 1, 0xC0, 300, 5);
  b.alloc(50, 1, 0xD0, 7, 0);         // no stack
  b.alloc(60, 2, 0x100000, 4096, 1);  // the system pool hands the cache a segment
  b.segment(60, EventKind::segment_reserve, 3, 0x100000, 4096);
  b.alloc(70, 3, 0x100000, 1024, 4);
  b.alloc(80, 3, 0x100400, 512, 3);
  b.free(90, 3, 0x100400);
  b.free(100, 1, 0xA0);
  b.alloc(110, 1, 0xE0, 64, 4);
  b.free(120, 1, 0xE0);  // temporary
}

test::FoldedLines folded(const std::string& path, TreeCost cost, const std::string& range = "") {
  auto r = memtrail("export --no-symbols --format folded --cost " +
                    std::string(tree_cost_name(cost)) + range + " " + shell_quote(path));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return test::parse_folded(r.out);
}

std::uint64_t sum(const test::FoldedLines& lines) {
  std::uint64_t s = 0;
  for (const auto& [path, c] : lines) s += c;
  return s;
}

// A node holds at least its children (self never wraps below zero), and
// the self costs of all nodes add up to the total.
void expect_costs_add_up(const CallTree& t) {
  TreeCosts self_sum;
  for (std::uint32_t n = 0; n < t.nodes.size(); ++n) {
    TreeCosts children;
    for (std::uint32_t c : t.children(n)) children += t.nodes[c].inclusive;
    for (std::size_t i = 0; i < kTreeCosts; ++i)
      EXPECT_LE(children.value[i], t.nodes[n].inclusive.value[i]) << "node " << t.path(n);
    self_sum += t.self(n);
  }
  EXPECT_EQ(self_sum, t.total());
}

TEST(CallTree, BothDirectionsHoldTheFoldedExportsStacks) {
  TraceBuilder b(temp_trace("tree.mtr"));
  write_trace(b);
  const std::string& path = b.finish();
  Analysis a = analyze_unsymbolized(path);
  CallTree down = build_call_tree(a, TreeDirection::top_down);
  CallTree up = build_call_tree(a, TreeDirection::bottom_up);
  for (TreeCost c : kAllCosts) {
    SCOPED_TRACE(tree_cost_name(c));
    const test::FoldedLines want = folded(path, c);
    ASSERT_FALSE(want.empty());
    EXPECT_EQ(test::tree_lines(down, c), want);
    EXPECT_EQ(test::tree_lines(up, c), want);
    EXPECT_EQ(down.total()[c], sum(want));
    EXPECT_EQ(up.total()[c], sum(want));
  }
  expect_costs_add_up(down);
  expect_costs_add_up(up);
}

TEST(CallTree, ShapeAndCostsAreExact) {
  TraceBuilder b(temp_trace("tree-shape.mtr"));
  write_trace(b);
  Analysis a = analyze_unsymbolized(b.finish());
  CallTree down = build_call_tree(a, TreeDirection::top_down);
  // Roots: the two leaf pools; the upstream "system" is left out.
  std::vector<std::string> roots;
  for (std::uint32_t r : down.children(CallTree::kRoot)) roots.push_back(down.name(r));
  std::sort(roots.begin(), roots.end());
  EXPECT_EQ(roots, (std::vector<std::string>{"[cache]", "[malloc]"}));
  // malloc: 5 allocations, 2 temporary, 771 bytes; 300 + 7 leaked.
  std::uint32_t heap = CallTree::kRoot;
  for (std::uint32_t r : down.children(CallTree::kRoot))
    if (down.name(r) == "[malloc]") heap = r;
  ASSERT_NE(heap, CallTree::kRoot);
  const TreeCosts& h = down.nodes[heap].inclusive;
  EXPECT_EQ(h[TreeCost::allocations], 5u);
  EXPECT_EQ(h[TreeCost::temporary], 2u);
  EXPECT_EQ(h[TreeCost::bytes], 671u);
  EXPECT_EQ(h[TreeCost::leaked], 307u);
  EXPECT_TRUE(down.symbols[down.nodes[heap].symbol].pool);
  // Bottom-up: the function 0x40 is one node under [malloc] with both of
  // its callers (0x20 and 0x30) beneath it.
  CallTree up = build_call_tree(a, TreeDirection::bottom_up);
  std::uint32_t f40 = CallTree::kRoot;
  for (std::uint32_t r : up.children(CallTree::kRoot))
    if (up.name(r) == "[malloc]")
      for (std::uint32_t c : up.children(r))
        if (up.name(c) == "0x40") f40 = c;
  ASSERT_NE(f40, CallTree::kRoot);
  EXPECT_EQ(up.nodes[f40].inclusive[TreeCost::allocations], 3u);  // 0xB0, 0xC0, 0xE0
  std::vector<std::string> callers;
  for (std::uint32_t c : up.children(f40)) callers.push_back(up.name(c));
  std::sort(callers.begin(), callers.end());
  EXPECT_EQ(callers, (std::vector<std::string>{"0x20", "0x30"}));
}

// Every leaf-pool site leads to a node whose self cost holds the site's
// (sites merged by name share it); upstream sites lead nowhere.
TEST(CallTree, EachSiteFindsTheNodeItsPathEndsAt) {
  TraceBuilder b(temp_trace("tree-find.mtr"));
  write_trace(b);
  Analysis a = analyze_unsymbolized(b.finish());
  for (TreeDirection d : {TreeDirection::top_down, TreeDirection::bottom_up}) {
    CallTree t = build_call_tree(a, d);
    std::vector<TreeCosts> found(t.nodes.size());
    int upstream = 0;
    for (const Site& s : a.sites) {
      const std::uint32_t n = find_site_node(t, a, s);
      if (a.pool(s.pool)->upstream) {
        EXPECT_EQ(n, TreeNode::kNone);
        ++upstream;
        continue;
      }
      ASSERT_NE(n, TreeNode::kNone);
      EXPECT_EQ(t.nodes[n].depth, s.frames.size() + 1);  // "[pool]" first
      found[n] += site_costs(s);
    }
    EXPECT_EQ(upstream, 1);
    for (std::uint32_t n = 0; n < t.nodes.size(); ++n) EXPECT_EQ(found[n], t.self(n));
  }
}

TEST(CallTree, RangeTreeHoldsTheRangesFoldedStacks) {
  TraceBuilder b(temp_trace("tree-range.mtr"));
  write_trace(b);
  const std::string& path = b.finish();
  Analysis whole = analyze_unsymbolized(path);
  Analysis part = analyze_unsymbolized(path, 35, 95);
  CallTree down = build_call_tree(part, TreeDirection::top_down);
  CallTree up = build_call_tree(part, TreeDirection::bottom_up);
  for (TreeCost c : kAllCosts) {
    SCOPED_TRACE(tree_cost_name(c));
    const test::FoldedLines want = folded(path, c, " --from 35 --to 95");
    EXPECT_EQ(test::tree_lines(down, c), want);
    EXPECT_EQ(test::tree_lines(up, c), want);
  }
  // 0xC0, 0xD0 in malloc and two cache blocks: 4 of the whole trace's 7.
  EXPECT_EQ(down.total()[TreeCost::allocations], 4u);
  EXPECT_EQ(build_call_tree(whole, TreeDirection::top_down).total()[TreeCost::allocations], 7u);
  EXPECT_EQ(down.total()[TreeCost::allocations], part.summary.allocations);
  EXPECT_EQ(down.total()[TreeCost::bytes], part.summary.bytes_allocated);
  EXPECT_EQ(down.total()[TreeCost::temporary], part.summary.temporary_allocations);
}

TEST(CallTree, OnePoolHasNoPoolFrameAndNoStackIsOneFrame) {
  TraceBuilder b(temp_trace("tree-one-pool.mtr"));
  b.pool(1, "malloc", PoolKind::heap);
  b.stack(1, 0, 0x10);
  b.alloc(10, 1, 0xA0, 100, 1);
  b.alloc(20, 1, 0xB0, 50, 0);
  Analysis a = analyze_unsymbolized(b.finish());
  CallTree t = build_call_tree(a, TreeDirection::top_down);
  std::vector<std::string> roots;
  for (std::uint32_t r : t.children(CallTree::kRoot)) roots.push_back(t.name(r));
  std::sort(roots.begin(), roots.end());
  EXPECT_EQ(roots, (std::vector<std::string>{"(no stack)", "0x10"}));
  EXPECT_EQ(test::tree_lines(t, TreeCost::bytes), folded(b.path(), TreeCost::bytes));
}

TEST(CallTree, CancelledBuildIsTheEmptyTree) {
  TraceBuilder b(temp_trace("tree-cancel.mtr"));
  b.pool(1, "malloc", PoolKind::heap);
  for (std::uint32_t s = 1; s <= 5000; ++s) b.stack(s, 0, 0x1000 + 16 * s);
  for (std::uint32_t s = 1; s <= 5000; ++s) b.alloc(s, 1, 0x100000 + 64 * s, 8, s);
  AnalysisOptions o;
  o.symbolize = false;
  o.symbol_cache = false;
  o.group_by_address = true;
  Analysis a = analyze(b.finish(), o);
  ASSERT_EQ(build_call_tree(a, TreeDirection::top_down).nodes.size(), 5001u);
  CallTree t = build_call_tree(a, TreeDirection::top_down, [] { return false; });
  EXPECT_EQ(t.nodes.size(), 1u);
  EXPECT_EQ(t.total(), TreeCosts{});
}

}  // namespace
}  // namespace memtrail
