// Call trees: "which code allocates this memory?" over the sites of an
// Analysis (the whole trace, or a range from Session::analyze_range).
//
//   memtrail::CallTree t = memtrail::build_call_tree(a, memtrail::TreeDirection::bottom_up);
//   for (std::uint32_t c : t.children(CallTree::kRoot))
//     printf("%s %llu\n", t.name(c).c_str(), t.nodes[c].inclusive[TreeCost::peak]);
//
// A node is a function reached by one call path. Top-down paths start at the
// outermost frame (main, a thread start) and end at the allocating frame;
// bottom-up paths start at the allocating frame and walk out to the callers.
// Nodes are named exactly as `export --format folded` names frames
// (folded_frame_name), and like that export the tree counts leaf pools only
// and starts each path with "[pool]" when the Analysis has several pools, and
// a site with no stack is the one frame "(no stack)". So for every cost the
// top-down root-to-node paths with their self costs are the folded lines,
// and every total below equals the sum of the folded export's lines.
//
// Costs per node, for the five costs of `export --cost` (TreeCost):
//   inclusive: the sites whose path passes through the node;
//   self:      the sites whose path ends at the node (CallTree::self():
//              inclusive less the children's inclusive, not stored). Top-down
//              that is what the function allocated itself (heaptrack's
//              "self"); bottom-up it is the stacks whose outermost frame the
//              node is, which recovers the folded lines but is no
//              caller-facing figure.
// Root (nodes[kRoot]) inclusive = the totals; sum of all self = the totals.
//
// Built from the symbolized, merged sites after the pass (the tree needs
// their frames; Session::analyze_range gives any range its own sites), in
// O(sites x depth). Memory: one TreeNode (64 B) per distinct (caller path,
// function) prefix plus one TreeSymbol per distinct function; the per-site
// frames are not copied. bench/gui_churn's 1.1*10^5 distinct stacks (17
// levels of two call sites each) give 63 nodes symbolized (the call sites of
// a level are one function) and, unsymbolized (every return address its own
// function: the worst case), 338k nodes / 21 MiB top-down and 688k nodes /
// 42 MiB bottom-up (bench_gui_session TRACE 3 nosym).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "memtrail/analysis.hpp"

namespace memtrail {

// The costs of `export --format folded --cost NAME`, in the order a view
// shows them.
enum class TreeCost : std::uint8_t { peak, allocations, temporary, leaked, bytes };
inline constexpr std::size_t kTreeCosts = 5;
// "peak", "allocations", "temporary", "leaked", "bytes" (the --cost names).
const char* tree_cost_name(TreeCost c);

struct TreeCosts {
  std::array<std::uint64_t, kTreeCosts> value{};
  std::uint64_t operator[](TreeCost c) const { return value[static_cast<std::size_t>(c)]; }
  std::uint64_t& operator[](TreeCost c) { return value[static_cast<std::size_t>(c)]; }
  TreeCosts& operator+=(const TreeCosts& o) {
    for (std::size_t i = 0; i < kTreeCosts; ++i) value[i] += o.value[i];
    return *this;
  }
  bool operator==(const TreeCosts&) const = default;
};

// A site's costs: peak_bytes, calls, temporaries, leaked.bytes, bytes_allocated.
TreeCosts site_costs(const Site& s);

enum class TreeDirection : std::uint8_t { top_down, bottom_up };

// A function as the tree names it, with where its first frame of that name
// was (for the reader and for filtering by file or module).
struct TreeSymbol {
  std::string name;  // folded_frame_name, "[pool]" or "(no stack)"
  std::string file;
  std::uint32_t line = 0;
  std::string module;
  bool pool = false;  // a "[pool]" node (first on its path)
};

struct TreeNode {
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  std::uint32_t parent = kNone;
  std::uint32_t first_child = kNone, next_sibling = kNone;
  std::uint32_t symbol = kNone;  // index into CallTree::symbols; kNone for the root
  std::uint32_t depth = 0;       // root 0, its children 1
  TreeCosts inclusive;
};

class CallTree {
 public:
  static constexpr std::uint32_t kRoot = 0;

  TreeDirection direction = TreeDirection::top_down;
  std::vector<TreeNode> nodes;  // nodes[kRoot] is the root; parents before children
  std::vector<TreeSymbol> symbols;

  const TreeCosts& total() const { return nodes[kRoot].inclusive; }
  const std::string& name(std::uint32_t node) const;  // "" for the root
  std::vector<std::uint32_t> children(std::uint32_t node) const;
  // The costs of the paths that end at `node` (see "self" above).
  TreeCosts self(std::uint32_t node) const;
  // The names from the root's child down to `node`, joined by ';' (a folded
  // line's path in top-down order of the nodes).
  std::string path(std::uint32_t node) const;
  // Bytes held by the tree (nodes, symbols and their strings).
  std::size_t memory_bytes() const;
};

// The node where the path of site `s` of `a` ends in `tree` (built from `a`):
// the row a "Top sites" entry stands for. TreeNode::kNone when the site is
// not in the tree (an upstream pool's, or one of no cost).
std::uint32_t find_site_node(const CallTree& tree, const Analysis& a, const Site& s);

// Leaf-pool sites of `a` in a tree. `keep_going` (optional) is asked every
// 4096 sites; false stops and returns an empty tree (root only).
CallTree build_call_tree(const Analysis& a, TreeDirection direction,
                         const std::function<bool()>& keep_going = {});

}  // namespace memtrail
