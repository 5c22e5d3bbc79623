// Writer-side stack deduplication: ip arrays (innermost first) become the id
// of the innermost node of a trie whose nodes are (parent, ip). New nodes are
// handed to a callback so they reach the trace before the first event that
// uses them.
//
// Built for programs with millions of distinct stacks (issue 28). A walk
// that looks up (parent, ip) level by level waits on two cache misses per
// level (an index slot, then the node it names) once the trie outgrows the
// cache: ~10 levels, ~1.8 us a stack. So the index is keyed instead by a
// hash of the whole prefix, outermost frame down to this one, which the
// frames alone give: every level's slot and candidate node are fetched
// before any is checked, and the misses of one stack overlap. The check is
// still exact: level d's candidate must name level d-1's node as its parent
// and hold frame d's ip, from the root down, so a hash collision costs a
// probe, never a merged stack. Once a level is absent every deeper one is
// too (prefixes of a stored stack are stored): those nodes are added
// without probing.
//
// Memory: a node is 8 bytes (parent id, index of its ip in a dictionary of
// distinct ips), the index 4-byte slots at 53-80 % load: ~14-18 bytes a
// node (a std::unordered_map took ~120). The prefix hash is not kept: when
// the index grows, the nodes' hashes are recomputed in id order (a parent
// comes before its children). Most nodes' parent is the node just before
// them (a new stack's frames are added in a row), whose hash was the last
// one computed; only branch points, parents of a later child not next to
// them (~one a new stack), are marked in a bit set (1 bit a node) and their
// hashes kept in a scratch array (4 bytes a branch point), freed right after. A stack shares its
// outer frames with the one interned before it more often than not (the same loop, the same
// caller): that common part is found by comparing ips with the last stack's, with no lookup.
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
  // The largest scratch an index growth mapped, besides the new index (the
  // trie's peak memory is at its last growth).
  std::size_t growth_scratch_bytes() const { return growth_scratch_bytes_; }

 private:
  struct Node {
    std::uint32_t parent;
    std::uint32_t ip;  // index into ip_values_
  };
  // One level of the stack being interned (outermost first), past the part
  // shared with the last stack.
  struct Level {
    std::uint32_t chain;  // prefix hash of frames 0..d
    std::uint32_t key;    // its digest, what the index is keyed by
    std::uint32_t found;  // candidate node from the index; 0 = absent
  };
  std::uint32_t ip_index(std::uint64_t ip);
  std::uint32_t add_node(std::uint32_t parent, std::uint32_t ip, std::uint32_t key);
  void add_growing(std::uint32_t id, std::uint32_t key);
  bool is_child(std::uint32_t id, std::uint32_t parent, std::uint64_t ip) const;
  bool is_branch_point(std::uint32_t id) const { return branch_points_[id >> 6] >> (id & 63) & 1; }
  std::size_t look_up_levels(const std::uint64_t* ips, std::size_t count, std::uint32_t chain);
  std::uint32_t exact_child(const Level& level, std::uint32_t parent, std::uint64_t ip) const;
  void remember(std::uint64_t ip, std::uint32_t id, std::uint32_t chain);

  ChunkedArray<Node> nodes_;               // index = id; 0 = root sentinel
  IdIndex edges_;                          // node ids by prefix hash
  ChunkedArray<std::uint64_t> ip_values_;  // index = ip index; 0 unused
  IdIndex ip_ids_;                         // ip indices by ip
  // Bit k: node k is the parent of a node other than k + 1 (index growth).
  ChunkedArray<std::uint64_t> branch_points_;
  // The last stack walked, outermost first: its ips, node ids, prefix hashes.
  std::vector<std::uint64_t> last_ips_;
  std::vector<std::uint32_t> last_ids_;
  std::vector<std::uint32_t> last_chain_;
  std::vector<Level> levels_;  // scratch of intern()
  std::size_t growth_scratch_bytes_ = 0;
};

}  // namespace memtrail::runtime
