// build_call_tree(): the sites' symbolized paths folded into one tree
// (memtrail/call_tree.hpp). Names are interned per distinct Frame (the
// sites share their frames through the FrameTable), children are found
// through one hash map that lives only while the tree is built.
#include "memtrail/call_tree.hpp"

#include <unordered_map>

#include "flat_map.hpp"
#include "memtrail/export.hpp"
#include "tree_path.hpp"

namespace memtrail {

// What the header promises per node (the memory bound at 10^5+ stacks).
static_assert(sizeof(TreeNode) == 64);

const char* tree_cost_name(TreeCost c) {
  switch (c) {
    case TreeCost::peak:
      return "peak";
    case TreeCost::allocations:
      return "allocations";
    case TreeCost::temporary:
      return "temporary";
    case TreeCost::leaked:
      return "leaked";
    case TreeCost::bytes:
      return "bytes";
  }
  return "";
}

TreeCosts site_costs(const Site& s) {
  TreeCosts c;
  c[TreeCost::peak] = s.peak_bytes;
  c[TreeCost::allocations] = s.calls;
  c[TreeCost::temporary] = s.temporaries;
  c[TreeCost::leaked] = s.leaked.bytes;
  c[TreeCost::bytes] = s.bytes_allocated;
  return c;
}

const std::string& CallTree::name(std::uint32_t node) const {
  static const std::string none;
  const std::uint32_t s = nodes[node].symbol;
  return s == TreeNode::kNone ? none : symbols[s].name;
}

std::vector<std::uint32_t> CallTree::children(std::uint32_t node) const {
  std::vector<std::uint32_t> out;
  for (std::uint32_t c = nodes[node].first_child; c != TreeNode::kNone; c = nodes[c].next_sibling)
    out.push_back(c);
  return out;
}

TreeCosts CallTree::self(std::uint32_t node) const {
  TreeCosts s = nodes[node].inclusive;
  for (std::uint32_t c = nodes[node].first_child; c != TreeNode::kNone; c = nodes[c].next_sibling)
    for (std::size_t i = 0; i < kTreeCosts; ++i) s.value[i] -= nodes[c].inclusive.value[i];
  return s;
}

std::string CallTree::path(std::uint32_t node) const {
  return detail::folded_path(*this, node);
}

std::size_t CallTree::memory_bytes() const {
  std::size_t bytes = nodes.capacity() * sizeof(TreeNode) + symbols.capacity() * sizeof(TreeSymbol);
  for (const TreeSymbol& s : symbols)
    bytes += s.name.capacity() + s.file.capacity() + s.module.capacity();
  return bytes;
}

namespace {

class TreeBuilder {
 public:
  explicit TreeBuilder(CallTree& tree) : tree_(tree) {
    tree_.nodes.emplace_back();  // the root
  }

  // The symbol of a frame: interned once per Frame object (the sites of an
  // Analysis share them) and once per distinct name.
  std::uint32_t symbol(const Frame& f) {
    auto [id, fresh] = by_frame_.try_emplace(reinterpret_cast<std::uintptr_t>(&f));
    if (fresh) *id = symbol(folded_frame_name(f), &f);
    return *id;
  }
  std::uint32_t symbol(const std::string& name, const Frame* where = nullptr, bool pool = false) {
    auto [it, fresh] = by_name_.try_emplace(name, static_cast<std::uint32_t>(tree_.symbols.size()));
    if (fresh) {
      TreeSymbol s;
      s.name = name;
      s.pool = pool;
      if (where) {
        s.file = where->file;
        s.line = where->line;
        s.module = where->module;
      }
      tree_.symbols.push_back(std::move(s));
    }
    return it->second;
  }

  // The child of `parent` named `symbol`, made on first use; adds `cost` to
  // its inclusive costs.
  std::uint32_t step(std::uint32_t parent, std::uint32_t symbol, const TreeCosts& cost) {
    const std::uint64_t key = (std::uint64_t{parent} << 32) | symbol;
    auto [child, fresh] = children_.try_emplace(key);
    if (fresh) {
      *child = static_cast<std::uint32_t>(tree_.nodes.size());
      TreeNode n;
      n.parent = parent;
      n.symbol = symbol;
      n.depth = tree_.nodes[parent].depth + 1;
      n.next_sibling = tree_.nodes[parent].first_child;
      tree_.nodes[parent].first_child = *child;
      tree_.nodes.push_back(n);
    }
    tree_.nodes[*child].inclusive += cost;
    return *child;
  }

 private:
  CallTree& tree_;
  // Open addressing (flat_map.hpp): a node-based map costs a heap block per
  // tree node, which dominated the build at 10^5 stacks.
  detail::AddressMap<std::uint32_t> by_frame_;  // Frame address -> symbol
  std::unordered_map<std::string, std::uint32_t> by_name_;
  detail::AddressMap<std::uint32_t> children_;  // parent << 32 | symbol -> node
};

bool is_upstream(const Analysis& a, PoolId pool) {
  const PoolStats* p = a.pool(pool);
  return p && p->upstream;
}

// Adds one site's path to the tree: "[pool]" first when there are several
// pools, then its frames outermost first (top-down) or innermost first.
void add_site(const Analysis& a, const Site& s, TreeDirection d, TreeBuilder& b, CallTree& t) {
  const TreeCosts cost = site_costs(s);
  t.nodes[CallTree::kRoot].inclusive += cost;
  std::uint32_t at = CallTree::kRoot;
  const PoolStats* p = a.pool(s.pool);
  if (a.pools.size() > 1 && p)
    at = b.step(at, b.symbol("[" + p->info.name + "]", nullptr, true), cost);
  if (s.frames.empty() && at == CallTree::kRoot) at = b.step(at, b.symbol("(no stack)"), cost);
  if (d == TreeDirection::top_down)
    for (auto it = s.frames.rbegin(); it != s.frames.rend(); ++it)
      at = b.step(at, b.symbol(*it), cost);
  else
    for (const Frame& f : s.frames) at = b.step(at, b.symbol(f), cost);
  // The path ends at `at`: its self cost is what its children do not hold.
}

}  // namespace

std::uint32_t find_site_node(const CallTree& tree, const Analysis& a, const Site& s) {
  if (tree.nodes.empty()) return TreeNode::kNone;
  std::uint32_t at = CallTree::kRoot;
  auto step = [&](const std::string& name) {
    if (at == TreeNode::kNone) return;
    std::uint32_t c = tree.nodes[at].first_child;
    while (c != TreeNode::kNone && tree.name(c) != name) c = tree.nodes[c].next_sibling;
    at = c;
  };
  const PoolStats* p = a.pool(s.pool);
  if (a.pools.size() > 1 && p) step("[" + p->info.name + "]");
  if (s.frames.empty() && at == CallTree::kRoot) step("(no stack)");
  if (tree.direction == TreeDirection::top_down)
    for (auto it = s.frames.rbegin(); it != s.frames.rend(); ++it) step(folded_frame_name(*it));
  else
    for (const Frame& f : s.frames) step(folded_frame_name(f));
  return at == CallTree::kRoot ? TreeNode::kNone : at;
}

CallTree build_call_tree(const Analysis& a, TreeDirection direction,
                         const std::function<bool()>& keep_going) {
  CallTree tree;
  tree.direction = direction;
  TreeBuilder builder(tree);
  std::size_t done = 0;
  for (const Site& s : a.sites) {
    if (keep_going && ++done % 4096 == 0 && !keep_going()) {
      CallTree stopped;
      stopped.direction = direction;
      stopped.nodes.emplace_back();
      return stopped;
    }
    if (is_upstream(a, s.pool) || site_costs(s) == TreeCosts{}) continue;
    add_site(a, s, direction, builder, tree);
  }
  tree.nodes.shrink_to_fit();
  return tree;
}

}  // namespace memtrail
