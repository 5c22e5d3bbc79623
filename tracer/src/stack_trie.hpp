// Writer-side stack deduplication: ip arrays (innermost first) become the id
// of the innermost node of a trie whose nodes are (parent, ip). New nodes are
// handed to a callback so they reach the trace before the first event that
// uses them.
//
// Built for programs with millions of distinct stacks (issue 28): a node is
// 8 bytes (parent id, index of its ip in a dictionary of distinct ips), the
// (parent, ip) -> node lookup is an IdIndex of 4-byte slots, and nothing
// else is kept per stack: ~14-18 bytes a node in all, grown by half without
// a rehash storm (std::unordered_map's nodes, buckets and a leaf cache took
// ~120). A stack shares its outer frames with the one interned before it
// more often than not (the same loop, the same caller): that common part is
// found by comparing ips with the last stack's, with no lookup, and the walk
// starts below it. Once a frame is new, every frame below it is new: those
// are added without probing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "id_index.hpp"
#include "memtrail/event.hpp"
#include "table_memory.hpp"

namespace memtrail::runtime {

// Append-only array in chunks of 2^18 elements (2 MiB of 8-byte ones):
// growing never copies, never holds twice the memory. Chunks are fresh
// mappings, resident only where written; every chunk but the first is
// offered huge pages (table_memory.hpp).
template <class T>
class ChunkedArray {
 public:
  T& operator[](std::uint32_t i) { return chunks_[i >> kShift][i & kMask]; }
  const T& operator[](std::uint32_t i) const { return chunks_[i >> kShift][i & kMask]; }
  std::uint32_t size() const { return size_; }
  void push_back(const T& v) {
    if ((size_ & kMask) == 0) chunks_.emplace_back(kMask + 1, !chunks_.empty());
    (*this)[size_++] = v;
  }
  // Resident bytes: the first chunk's written pages, every later chunk whole
  // (a huge page is resident from its first write).
  std::size_t memory_bytes() const {
    if (chunks_.empty()) return 0;
    std::size_t first = std::min<std::size_t>(size_, kMask + 1) * sizeof(T);
    return (first + 4095) / 4096 * 4096 + (chunks_.size() - 1) * (kMask + 1) * sizeof(T);
  }

 private:
  static constexpr int kShift = 18;
  static constexpr std::uint32_t kMask = (1u << kShift) - 1;
  std::vector<TableMemory<T>> chunks_;
  std::uint32_t size_ = 0;
};

class StackTrie {
 public:
  using NewNode = std::function<void(const StackNode&)>;

  StackTrie();
  // Returns the leaf id for `ips[0..n)` (ips[0] innermost); 0 when n == 0.
  // Past IdIndex::kMaxId nodes (~1.3e8, GBs of trie) a stack that needs a
  // new node is cut to its outer frames that exist.
  std::uint32_t intern(const std::uint64_t* ips, std::size_t n, const NewNode& on_new);
  std::size_t size() const { return nodes_.size() - 1; }
  // The ips of stack `id` (innermost first) into `out`: what intern() was
  // given, for carrying a stack into another trie (a fork child's trace).
  void frames(std::uint32_t id, std::vector<std::uint64_t>& out) const;
  // Bytes held by the tables (for benchmarks and tests).
  std::size_t memory_bytes() const;

 private:
  struct Node {
    std::uint32_t parent;
    std::uint32_t ip;  // index into ip_values_
  };
  static std::uint64_t edge_hash(std::uint32_t parent, std::uint32_t ip);
  static std::uint64_t ip_hash(std::uint64_t ip);
  std::uint32_t ip_index(std::uint64_t ip);
  std::uint32_t add_node(std::uint32_t parent, std::uint32_t ip, std::uint64_t hash);

  ChunkedArray<Node> nodes_;               // index = id; 0 = root sentinel
  IdIndex edges_;                          // node ids by (parent, ip)
  ChunkedArray<std::uint64_t> ip_values_;  // index = ip index; 0 unused
  IdIndex ip_ids_;                         // ip indices by ip
  // The last stack walked, outermost first, and its node ids.
  std::vector<std::uint64_t> last_ips_;
  std::vector<std::uint32_t> last_ids_;
};

}  // namespace memtrail::runtime
