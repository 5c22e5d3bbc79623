// diff_call_trees (memtrail/diff_tree.hpp) on hand-made call trees: paths
// match by name, each side keeps its inclusive costs, and a node's width is
// the larger side's self cost plus its children's widths — never narrower
// than either side nor than its children.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "memtrail/diff_tree.hpp"

namespace memtrail {
namespace {

// A top-down tree from folded lines ("main;f" -> cost) for one cost.
CallTree tree_of(const std::map<std::string, std::uint64_t>& lines, TreeCost cost) {
  CallTree t;
  t.nodes.push_back({});
  std::map<std::pair<std::uint32_t, std::string>, std::uint32_t> child;
  for (const auto& [path, value] : lines) {
    std::uint32_t at = CallTree::kRoot;
    t.nodes[at].inclusive[cost] += value;
    std::istringstream in(path);
    for (std::string name; std::getline(in, name, ';');) {
      auto [it, fresh] = child.try_emplace({at, name}, 0);
      if (fresh) {
        TreeNode n;
        n.parent = at;
        n.depth = t.nodes[at].depth + 1;
        n.symbol = static_cast<std::uint32_t>(t.symbols.size());
        t.symbols.push_back({name});
        n.next_sibling = t.nodes[at].first_child;
        it->second = static_cast<std::uint32_t>(t.nodes.size());
        t.nodes[at].first_child = it->second;
        t.nodes.push_back(n);
      }
      at = it->second;
      t.nodes[at].inclusive[cost] += value;
    }
  }
  return t;
}

struct Side {
  std::uint64_t a, b, width;
  bool operator==(const Side&) const = default;
};

// Each path of the diff tree with its a, b and width.
std::map<std::string, Side> sides(const DiffTree& d) {
  std::map<std::string, Side> out;
  for (std::uint32_t n = 0; n < d.nodes.size(); ++n)
    out[d.path(n)] = {d.nodes[n].a, d.nodes[n].b, d.nodes[n].width};
  return out;
}

TEST(DiffTree, DisjointPathsAddUpInWidth) {
  // A's bytes under f, B's under g: main is as wide as both, wider than
  // either side (max(a, b) would not hold its two children).
  auto a = tree_of({{"main;f", 10}}, TreeCost::peak);
  auto b = tree_of({{"main;g", 10}}, TreeCost::peak);
  DiffTree d = diff_call_trees(a, b, TreeCost::peak);
  std::map<std::string, Side> want = {
      {"", {10, 10, 20}}, {"main", {10, 10, 20}}, {"main;f", {10, 0, 10}}, {"main;g", {0, 10, 10}}};
  EXPECT_EQ(sides(d), want);
}

TEST(DiffTree, SamePathsTakeTheLargerSide) {
  auto a = tree_of({{"main;f", 10}, {"main;h", 30}}, TreeCost::allocations);
  auto b = tree_of({{"main;f", 15}, {"main;h", 20}}, TreeCost::allocations);
  DiffTree d = diff_call_trees(a, b, TreeCost::allocations);
  EXPECT_EQ(d.cost, TreeCost::allocations);
  std::map<std::string, Side> want = {{"", {40, 35, 45}},
                                      {"main", {40, 35, 45}},
                                      {"main;f", {10, 15, 15}},
                                      {"main;h", {30, 20, 30}}};
  EXPECT_EQ(sides(d), want);
}

TEST(DiffTree, SelfCostsCountWithTheirLargerSide) {
  // main allocates itself (5 in A, 8 in B) and through f (10, 4).
  auto a = tree_of({{"main", 5}, {"main;f", 10}}, TreeCost::bytes);
  auto b = tree_of({{"main", 8}, {"main;f", 4}}, TreeCost::bytes);
  DiffTree d = diff_call_trees(a, b, TreeCost::bytes);
  std::map<std::string, Side> want = {
      {"", {15, 12, 18}}, {"main", {15, 12, 18}}, {"main;f", {10, 4, 10}}};
  EXPECT_EQ(sides(d), want);
}

TEST(DiffTree, OtherCostsAndEmptySidesAreLeftOut) {
  auto a = tree_of({{"main;f", 10}}, TreeCost::peak);
  CallTree empty;
  empty.nodes.push_back({});
  DiffTree d = diff_call_trees(a, empty, TreeCost::peak);
  std::map<std::string, Side> want = {
      {"", {10, 0, 10}}, {"main", {10, 0, 10}}, {"main;f", {10, 0, 10}}};
  EXPECT_EQ(sides(d), want);
  // A tree has no leaked bytes: nothing but the root.
  EXPECT_EQ(diff_call_trees(a, a, TreeCost::leaked).nodes.size(), 1u);
}

}  // namespace
}  // namespace memtrail
