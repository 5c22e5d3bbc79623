#include "stack_trie.hpp"

namespace memtrail::runtime {

namespace {
std::uint64_t hash_ips(const std::uint64_t* ips, std::size_t n) {
  std::uint64_t h = 0xcbf29ce484222325ull ^ n;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= ips[i];
    h *= 0x100000001b3ull;
    h ^= h >> 29;
  }
  return h;
}
}  // namespace

bool StackTrie::matches(std::uint32_t leaf, const std::uint64_t* ips, std::size_t n) const {
  std::uint32_t id = leaf;
  for (std::size_t i = 0; i < n; ++i) {
    if (id == 0 || nodes_[id].ip != ips[i]) return false;
    id = nodes_[id].parent;
  }
  return id == 0;
}

std::uint32_t StackTrie::intern(const std::uint64_t* ips, std::size_t n, const NewNode& on_new) {
  if (n == 0) return 0;
  std::uint64_t h = hash_ips(ips, n);
  auto cached = leaf_cache_.find(h);
  if (cached != leaf_cache_.end() && matches(cached->second, ips, n)) return cached->second;
  std::uint32_t parent = 0;
  for (std::size_t i = n; i-- > 0;) {  // outermost frame first
    auto [it, inserted] = edges_.try_emplace({parent, ips[i]}, 0);
    if (inserted) {
      it->second = static_cast<std::uint32_t>(nodes_.size());
      nodes_.push_back(Node{parent, ips[i]});
      on_new(StackNode{it->second, parent, ips[i]});
    }
    parent = it->second;
  }
  leaf_cache_[h] = parent;
  return parent;
}

}  // namespace memtrail::runtime
