// The folded path of a tree node: the names from the root's child down to
// the node, ';'-joined (`export --format folded`'s line without its cost).
// One definition for the call tree and the diff tree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memtrail/call_tree.hpp"

namespace memtrail::detail {

template <class Tree>
std::string folded_path(const Tree& tree, std::uint32_t node) {
  std::vector<std::uint32_t> up;
  for (std::uint32_t n = node; n != Tree::kRoot && n != TreeNode::kNone; n = tree.nodes[n].parent)
    up.push_back(n);
  std::string out;
  for (auto it = up.rbegin(); it != up.rend(); ++it) {
    if (!out.empty()) out += ';';
    out += tree.name(*it);
  }
  return out;
}

}  // namespace memtrail::detail
