// Two call trees merged for a differential flame graph: the call paths of
// trace A and trace B (memtrail/call_tree.hpp, same direction), matched by
// the names along the path (folded_frame_name, as `export --format folded`
// and the diff's site matching by symbolized stack do), each node holding
// A's and B's inclusive cost of one TreeCost.
//
//   memtrail::DiffTree d = memtrail::diff_call_trees(tree_a, tree_b, TreeCost::peak);
//   // d.nodes[DiffTree::kRoot].a == tree_a.total()[peak], .b likewise
//
// Width: a flame graph box must hold its children, and max(a, b) of a node
// can be less than the sum of its children's (A's bytes under one callee, B's
// under another). So a node's `width` is the larger side's *self* cost plus
// its children's widths: every root-to-node path (a folded line) counts
// with the larger of its A and B costs, and width >= max(a, b) everywhere.
// Colour by b - a. Memory: one DiffTreeNode per distinct path of either side.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memtrail/call_tree.hpp"

namespace memtrail {

struct DiffTreeNode {
  std::uint32_t parent = TreeNode::kNone;
  std::uint32_t first_child = TreeNode::kNone, next_sibling = TreeNode::kNone;
  std::uint32_t depth = 0;     // root 0
  std::uint32_t name = 0;      // index into DiffTree::names (root: "")
  std::uint64_t a = 0, b = 0;  // inclusive cost in A and in B
  std::uint64_t width = 0;     // see the header comment
};

struct DiffTree {
  static constexpr std::uint32_t kRoot = 0;
  TreeCost cost = TreeCost::peak;
  TreeDirection direction = TreeDirection::top_down;
  std::vector<DiffTreeNode> nodes;  // parents before children
  std::vector<std::string> names;

  const std::string& name(std::uint32_t node) const { return names[nodes[node].name]; }
  std::vector<std::uint32_t> children(std::uint32_t node) const;
  // Names from the root's child down to `node`, joined by ';'.
  std::string path(std::uint32_t node) const;
};

// `a` and `b` must have the same direction.
DiffTree diff_call_trees(const CallTree& a, const CallTree& b, TreeCost cost);

}  // namespace memtrail
