#include "stack_trie.hpp"

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
}  // namespace

StackTrie::StackTrie() {
  nodes_.push_back(Node{0, 0});
  ip_values_.push_back(0);
}

std::uint64_t StackTrie::edge_hash(std::uint32_t parent, std::uint32_t ip) {
  return mix(std::uint64_t{parent} << 32 | ip);
}

std::uint64_t StackTrie::ip_hash(std::uint64_t ip) {
  return mix(ip);
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

std::uint32_t StackTrie::add_node(std::uint32_t parent, std::uint32_t ip, std::uint64_t hash) {
  std::uint32_t id = nodes_.size();
  nodes_.push_back(Node{parent, ip});
  edges_.insert(hash, id, [this](std::uint32_t k) {
    const Node& n = nodes_[k];
    return edge_hash(n.parent, n.ip);
  });
  return id;
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
  std::uint32_t parent = depth ? last_ids_[depth - 1] : 0;
  bool fresh = false;  // a node was added: every deeper one is new too
  for (; depth < n; ++depth) {
    const std::uint64_t ip = ips[n - 1 - depth];
    const std::uint32_t ipx = ip_index(ip);
    if (ipx == 0) break;  // the dictionary is full (kMaxId distinct ips)
    const std::uint64_t h = edge_hash(parent, ipx);
    std::uint32_t id = fresh ? 0 : edges_.find(h, [&](std::uint32_t k) {
      const Node& node = nodes_[k];
      return node.parent == parent && node.ip == ipx;
    });
    if (id == 0) {
      if (nodes_.size() > IdIndex::kMaxId) break;
      fresh = true;
      id = add_node(parent, ipx, h);
      on_new(StackNode{id, parent, ip});
    }
    parent = id;
    last_ips_.push_back(ip);
    last_ids_.push_back(id);
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
         ip_ids_.memory_bytes();
}

}  // namespace memtrail::runtime
