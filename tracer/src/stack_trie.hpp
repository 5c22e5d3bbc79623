// Writer-side stack deduplication: ip arrays (innermost first) become the id
// of the innermost node of a trie whose nodes are (parent, ip). A cache keyed
// by the hash of the whole array makes a repeated stack one lookup plus a
// verifying walk. New nodes are handed to a callback so they reach the trace
// before the first event that uses them.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "memtrail/event.hpp"

namespace memtrail::runtime {

class StackTrie {
 public:
  using NewNode = std::function<void(const StackNode&)>;

  // Returns the leaf id for `ips[0..n)` (ips[0] innermost); 0 when n == 0.
  std::uint32_t intern(const std::uint64_t* ips, std::size_t n, const NewNode& on_new);
  std::size_t size() const { return nodes_.size() - 1; }

 private:
  struct Node {
    std::uint32_t parent;
    std::uint64_t ip;
  };
  struct EdgeHash {
    std::size_t operator()(const std::pair<std::uint32_t, std::uint64_t>& k) const {
      return std::hash<std::uint64_t>()(k.second * 0x9e3779b97f4a7c15ull + k.first);
    }
  };
  bool matches(std::uint32_t leaf, const std::uint64_t* ips, std::size_t n) const;

  std::vector<Node> nodes_{Node{0, 0}};  // index = id; 0 = root sentinel
  std::unordered_map<std::pair<std::uint32_t, std::uint64_t>, std::uint32_t, EdgeHash> edges_;
  std::unordered_map<std::uint64_t, std::uint32_t> leaf_cache_;  // hash(ips) -> leaf
};

}  // namespace memtrail::runtime
