#include "stack_trie.hpp"

#include <bit>

namespace memtrail::runtime {

namespace {
// murmur3's 64-bit finaliser: every input bit reaches every output bit, as
// IdIndex needs (fastrange takes the high bits, the tag bits 27..31).
std::uint64_t mix(std::uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}
constexpr std::uint32_t kChainSeed = 0x6d656d74u;  // the root's prefix hash

// murmur3's 32-bit finaliser.
std::uint32_t mix32(std::uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

// One multiply and a rotate a level: the chain of a stack's levels is a
// dependent sequence, so it stays short; prefix_key mixes each link fully,
// off the chain. 32 bits, so that growth's scratch copy is 4 bytes a node:
// collisions (and prefixes that extend colliding ones alike) cost a probe,
// never a wrong answer (intern checks every candidate).
std::uint32_t chain_step(std::uint32_t chain, std::uint64_t ip) {
  const auto folded = static_cast<std::uint32_t>(ip ^ ip >> 32);
  return std::rotl((chain ^ folded) * 0x9e3779b1u, 15);
}

std::uint32_t prefix_key(std::uint32_t chain) {
  return mix32(chain);
}

// The index wants its slot from the high bits and a tag from bits 27..31
// of the low word that does not repeat the slot's bits.
std::uint64_t index_hash(std::uint32_t key) {
  return std::uint64_t{key} << 32 | static_cast<std::uint32_t>(key * 0x9e3779b1u);
}

std::uint64_t ip_hash(std::uint64_t ip) {
  return mix(ip);
}
}  // namespace

StackTrie::StackTrie() {
  nodes_.push_back(Node{0, 0});
  branch_points_.push_back(0);
  ip_values_.push_back(0);
}

std::uint32_t StackTrie::ip_index(std::uint64_t ip) {
  std::uint64_t h = ip_hash(ip);
  std::uint32_t k = ip_ids_.find(h, [&](std::uint32_t i) { return ip_values_[i] == ip; });
  if (k != 0 || ip_values_.size() > IdIndex::kMaxId) return k;
  k = ip_values_.size();
  ip_values_.push_back(ip);
  ip_ids_.insert(h, k, [this](std::uint32_t i) { return ip_hash(ip_values_[i]); });
  return k;
}

std::uint32_t StackTrie::add_node(std::uint32_t parent, std::uint32_t ip, std::uint32_t key) {
  std::uint32_t id = nodes_.size();
  nodes_.push_back(Node{parent, ip});
  if (id % 64 == 0) branch_points_.push_back(0);
  if (parent != 0 && parent != id - 1)
    branch_points_[parent >> 6] |= std::uint64_t{1} << (parent & 63);
  if (edges_.full())
    add_growing(id, key);
  else
    edges_.insert(index_hash(key), id, [](std::uint32_t) -> std::uint64_t { __builtin_trap(); });
  return id;
}

// The index grows on this insert and asks for every node's hash in id
// order: each is its parent's chain one step on. The parent is the node
// just before (its chain is `last`), the root, or a branch point, whose
// chain was kept in `kept` at its rank among the branch points
// (`rank_before` counts them per 64 ids).
void StackTrie::add_growing(std::uint32_t id, std::uint32_t key) {
  const std::uint32_t words = branch_points_.size();
  TableMemory<std::uint32_t> rank_before(words);
  std::uint32_t branch_count = 0;
  for (std::uint32_t w = 0; w < words; ++w) {
    rank_before[w] = branch_count;
    branch_count += std::popcount(branch_points_[w]);
  }
  TableMemory<std::uint32_t> kept(branch_count);
  auto kept_chain = [&](std::uint32_t k) -> std::uint32_t& {
    const std::uint64_t below = (std::uint64_t{1} << (k & 63)) - 1;
    return kept[rank_before[k >> 6] + std::popcount(branch_points_[k >> 6] & below)];
  };
  std::uint32_t last = kChainSeed;  // the chain of node k - 1 (the root's at first)
  edges_.insert(index_hash(key), id, [&](std::uint32_t k) {
    const Node& node = nodes_[k];
    const std::uint32_t parent_chain = node.parent == k - 1 ? last
                                       : node.parent == 0   ? kChainSeed
                                                            : kept_chain(node.parent);
    last = chain_step(parent_chain, ip_values_[node.ip]);
    if (is_branch_point(k)) kept_chain(k) = last;
    return index_hash(prefix_key(last));
  });
  growth_scratch_bytes_ = std::max(growth_scratch_bytes_, rank_before.bytes() + kept.bytes());
}

inline bool StackTrie::is_child(std::uint32_t id, std::uint32_t parent, std::uint64_t ip) const {
  if (id == 0) return false;
  const Node& node = nodes_[id];
  return node.parent == parent && ip_values_[node.ip] == ip;
}

// Fills levels_[0..count) for the frames ips[count-1] (outermost) down to
// ips[0], each level's prefix hash continuing `chain`, and returns how many
// outer levels have a candidate node (the first level without one is
// absent, and so is every deeper one). Two passes so that no load waits
// for another: all slots are requested, then all candidate nodes.
std::size_t StackTrie::look_up_levels(const std::uint64_t* ips, std::size_t count,
                                      std::uint32_t chain) {
  if (levels_.size() < count) levels_.resize(count);
  for (std::size_t j = 0; j < count; ++j) {
    chain = chain_step(chain, ips[count - 1 - j]);
    Level& level = levels_[j];
    level.chain = chain;
    level.key = prefix_key(chain);
    edges_.prefetch(index_hash(level.key));
  }
  for (std::size_t j = 0; j < count; ++j) {
    Level& level = levels_[j];
    level.found = edges_.first_candidate(index_hash(level.key));
    if (level.found == 0) return j;
    __builtin_prefetch(&nodes_[level.found]);
  }
  return count;
}

// The node for `level` below `parent`, when the first candidate was not it
// (another prefix with the same tag in the probe run): the whole run.
inline std::uint32_t StackTrie::exact_child(const Level& level, std::uint32_t parent,
                                            std::uint64_t ip) const {
  return edges_.find(index_hash(level.key),
                     [&](std::uint32_t k) { return is_child(k, parent, ip); });
}

inline void StackTrie::remember(std::uint64_t ip, std::uint32_t id, std::uint32_t chain) {
  last_ips_.push_back(ip);
  last_ids_.push_back(id);
  last_chain_.push_back(chain);
}

std::uint32_t StackTrie::intern(const std::uint64_t* ips, std::size_t n, const NewNode& on_new) {
  if (n == 0) return 0;
  // Outer frames shared with the last stack walked keep their nodes.
  std::size_t depth = 0;
  const std::size_t last = last_ips_.size();
  while (depth < n && depth < last && ips[n - 1 - depth] == last_ips_[depth]) ++depth;
  if (depth == n) return last_ids_[n - 1];
  last_ips_.resize(depth);
  last_ids_.resize(depth);
  last_chain_.resize(depth);
  std::uint32_t parent = depth ? last_ids_[depth - 1] : 0;
  // The rest, ips[rest-1] (outermost) down to ips[0], is level j = 0..rest.
  const std::size_t rest = n - depth;
  const std::size_t known = look_up_levels(ips, rest, depth ? last_chain_[depth - 1] : kChainSeed);
  std::size_t j = 0;
  for (; j < known; ++j) {  // exact, from the shared part down
    const std::uint64_t ip = ips[rest - 1 - j];
    std::uint32_t id = levels_[j].found;
    if (!is_child(id, parent, ip)) id = exact_child(levels_[j], parent, ip);
    if (id == 0) break;
    parent = id;
    remember(ip, id, levels_[j].chain);
  }
  for (; j < rest; ++j) {  // absent: so is every deeper level
    const std::uint64_t ip = ips[rest - 1 - j];
    const std::uint32_t ipx = ip_index(ip);
    if (ipx == 0 || nodes_.size() > IdIndex::kMaxId) break;  // full (kMaxId)
    const std::uint32_t id = add_node(parent, ipx, levels_[j].key);
    on_new(StackNode{id, parent, ip});
    parent = id;
    remember(ip, id, levels_[j].chain);
  }
  return parent;
}

void StackTrie::frames(std::uint32_t id, std::vector<std::uint64_t>& out) const {
  out.clear();
  for (; id != 0 && id < nodes_.size(); id = nodes_[id].parent)
    out.push_back(ip_values_[nodes_[id].ip]);
}

std::size_t StackTrie::memory_bytes() const {
  return nodes_.memory_bytes() + edges_.memory_bytes() + ip_values_.memory_bytes() +
         ip_ids_.memory_bytes() + branch_points_.memory_bytes();
}

}  // namespace memtrail::runtime
