// Folded-stack lines as a map (path -> cost), from `memtrail export
// --format folded` text and from a CallTree, so tests can say "the tree
// holds exactly the folded export's stacks".
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "memtrail/call_tree.hpp"

namespace memtrail::test {

using FoldedLines = std::map<std::string, std::uint64_t>;

// "a;b;c 42" lines; the cost is after the last space.
inline FoldedLines parse_folded(const std::string& text) {
  FoldedLines out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    auto space = line.rfind(' ');
    if (space == std::string::npos) continue;
    out[line.substr(0, space)] += std::stoull(line.substr(space + 1));
  }
  return out;
}

// The tree's stacks in the folded export's order ("[pool]" first, then the
// frames outermost first) with their self costs, zero-cost stacks left out.
inline FoldedLines tree_lines(const CallTree& t, TreeCost cost) {
  FoldedLines out;
  for (std::uint32_t n = 1; n < t.nodes.size(); ++n) {
    const std::uint64_t c = t.self(n)[cost];
    if (c == 0) continue;
    std::vector<std::uint32_t> up;  // the node, its parent, ..., the root's child
    for (std::uint32_t at = n; at != CallTree::kRoot; at = t.nodes[at].parent) up.push_back(at);
    std::reverse(up.begin(), up.end());
    // Bottom-up paths run innermost first after the pool: reverse the frames.
    const bool pool_first = t.symbols[t.nodes[up.front()].symbol].pool;
    if (t.direction == TreeDirection::bottom_up)
      std::reverse(up.begin() + (pool_first ? 1 : 0), up.end());
    std::vector<std::string> names;
    for (std::uint32_t at : up) names.push_back(t.name(at));
    std::string path;
    for (const auto& s : names) path += (path.empty() ? "" : ";") + s;
    out[path] += c;
  }
  return out;
}

}  // namespace memtrail::test
