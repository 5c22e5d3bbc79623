// diff_call_trees(): two CallTrees merged path by path (memtrail/diff_tree.hpp).
#include "memtrail/diff_tree.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "tree_path.hpp"

namespace memtrail {

namespace {

class Merger {
 public:
  Merger(DiffTree& out, TreeCost cost) : out_(out), cost_(cost) {
    out_.names.push_back("");
    out_.nodes.push_back({});
    last_child_.push_back(TreeNode::kNone);
  }

  // Adds the subtree of `t` under `from` (side 0: A, 1: B) below `into`.
  void add(const CallTree& t, std::uint32_t from, std::uint32_t into, int side) {
    struct Todo {
      std::uint32_t from, into;
    };
    std::vector<Todo> todo{{from, into}};
    while (!todo.empty()) {
      const Todo d = todo.back();
      todo.pop_back();
      (side == 0 ? out_.nodes[d.into].a : out_.nodes[d.into].b) += t.nodes[d.from].inclusive[cost_];
      for (std::uint32_t c = t.nodes[d.from].first_child; c != TreeNode::kNone;
           c = t.nodes[c].next_sibling)
        if (t.nodes[c].inclusive[cost_] != 0) todo.push_back({c, child(d.into, t.name(c))});
    }
  }

  // Widths from the leaves up (children come after their parents).
  void widen() {
    for (std::size_t i = out_.nodes.size(); i-- > 0;) {
      DiffTreeNode& n = out_.nodes[i];
      std::uint64_t kids_a = 0, kids_b = 0, kids_w = 0;
      for (std::uint32_t c = n.first_child; c != TreeNode::kNone; c = out_.nodes[c].next_sibling) {
        kids_a += out_.nodes[c].a;
        kids_b += out_.nodes[c].b;
        kids_w += out_.nodes[c].width;
      }
      n.width = std::max(n.a - kids_a, n.b - kids_b) + kids_w;
    }
  }

 private:
  std::uint32_t child(std::uint32_t parent, const std::string& name) {
    const std::uint32_t id = intern(name);
    auto [it, fresh] = children_.try_emplace({parent, id}, 0);
    if (!fresh) return it->second;
    const auto node = static_cast<std::uint32_t>(out_.nodes.size());
    DiffTreeNode n;
    n.parent = parent;
    n.depth = out_.nodes[parent].depth + 1;
    n.name = id;
    // Appended last among its siblings, so siblings keep their first-seen order.
    std::uint32_t& last = last_child_[parent];
    (last == TreeNode::kNone ? out_.nodes[parent].first_child : out_.nodes[last].next_sibling) =
        node;
    last = node;
    out_.nodes.push_back(n);
    last_child_.push_back(TreeNode::kNone);
    it->second = node;
    return node;
  }

  std::uint32_t intern(const std::string& name) {
    auto [it, fresh] = ids_.try_emplace(name, static_cast<std::uint32_t>(out_.names.size()));
    if (fresh) out_.names.push_back(name);
    return it->second;
  }

  DiffTree& out_;
  TreeCost cost_;
  std::vector<std::uint32_t> last_child_;  // by node
  std::unordered_map<std::string, std::uint32_t> ids_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> children_;
};

}  // namespace

std::vector<std::uint32_t> DiffTree::children(std::uint32_t node) const {
  std::vector<std::uint32_t> out;
  for (std::uint32_t c = nodes[node].first_child; c != TreeNode::kNone; c = nodes[c].next_sibling)
    out.push_back(c);
  return out;
}

std::string DiffTree::path(std::uint32_t node) const {
  return detail::folded_path(*this, node);
}

DiffTree diff_call_trees(const CallTree& a, const CallTree& b, TreeCost cost) {
  DiffTree out;
  out.cost = cost;
  out.direction = a.direction;
  Merger m(out, cost);
  if (!a.nodes.empty()) m.add(a, CallTree::kRoot, DiffTree::kRoot, 0);
  if (!b.nodes.empty()) m.add(b, CallTree::kRoot, DiffTree::kRoot, 1);
  m.widen();
  return out;
}

}  // namespace memtrail
