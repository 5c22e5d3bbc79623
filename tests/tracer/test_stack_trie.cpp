// The writer's stack trie and its IdIndex: every interned stack reads back
// from the nodes the trie emitted, equal stacks share an id, and the tables
// stay small per node (issue 28: 10^6 distinct stacks in <= 30 MB).
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

#include "id_index.hpp"
#include "stack_trie.hpp"
#include "table_memory.hpp"

namespace memtrail::runtime {
namespace {

TEST(IdIndex, FindsEveryIdThroughCollisionsGrowthAndWraparound) {
  IdIndex index;
  std::vector<std::uint64_t> keys{0};  // index = id
  // Few distinct hashes: long probe runs that wrap past the table's end.
  auto hash_of_key = [](std::uint64_t key) { return (key % 7) * 0x9e3779b97f4a7c15ull; };
  for (std::uint32_t id = 1; id <= 20000; ++id) {
    std::uint64_t key = id * 1000003ull;
    keys.push_back(key);
    index.insert(hash_of_key(key), id, [&](std::uint32_t k) { return hash_of_key(keys[k]); });
  }
  EXPECT_EQ(index.size(), 20000u);
  EXPECT_LE(index.size() * 5, index.capacity() * 4);
  for (std::uint32_t id = 1; id <= 20000; ++id)
    ASSERT_EQ(
        index.find(hash_of_key(keys[id]), [&](std::uint32_t k) { return keys[k] == keys[id]; }),
        id);
  EXPECT_EQ(index.find(hash_of_key(5), [&](std::uint32_t k) { return keys[k] == 5; }), 0u);
  IdIndex empty;
  EXPECT_EQ(empty.find(1, [](std::uint32_t) { return true; }), 0u);
}

struct Recorded {
  std::map<std::uint32_t, StackNode> nodes;
  StackTrie::NewNode sink() {
    return [this](const StackNode& n) {
      EXPECT_EQ(nodes.count(n.id), 0u) << "node " << n.id << " emitted twice";
      EXPECT_TRUE(n.parent == 0 || nodes.count(n.parent)) << "parent emitted after child";
      nodes[n.id] = n;
    };
  }
  std::vector<std::uint64_t> stack_of(std::uint32_t leaf) const {
    std::vector<std::uint64_t> ips;
    for (std::uint32_t id = leaf; id != 0; id = nodes.at(id).parent) ips.push_back(nodes.at(id).ip);
    return ips;
  }
};

TEST(StackTrie, EveryStackReadsBackAndEqualStacksShareAnId) {
  StackTrie trie;
  Recorded rec;
  auto sink = rec.sink();
  std::mt19937_64 rng(7);
  std::vector<std::vector<std::uint64_t>> stacks;
  // Random stacks over few ips (shared prefixes, repeated ips at many depths),
  // prefixes of other stacks, and the empty stack.
  for (int i = 0; i < 3000; ++i) {
    std::size_t n = rng() % 40;
    std::vector<std::uint64_t> s;
    for (std::size_t k = 0; k < n; ++k) s.push_back(0x400000 + rng() % 6 * 16);
    stacks.push_back(s);
    if (n > 3) stacks.emplace_back(s.begin() + 2, s.end());  // its outer part
  }
  std::map<std::vector<std::uint64_t>, std::uint32_t> ids;
  for (int round = 0; round < 3; ++round) {
    std::shuffle(stacks.begin(), stacks.end(), rng);
    for (const auto& s : stacks) {
      std::uint32_t id = trie.intern(s.data(), s.size(), sink);
      ASSERT_EQ(rec.stack_of(id), s);
      auto [it, added] = ids.emplace(s, id);
      ASSERT_EQ(it->second, id);
    }
  }
  EXPECT_EQ(trie.size(), rec.nodes.size());
}

// The index is keyed by a 32-bit hash of the whole prefix, which folds an
// ip's halves together: ips k << 32 | k all fold to 0, so every stack of a
// given depth over them has the same key at every level. Equal keys must
// cost probes, never merge two stacks: each candidate's parent and ip are
// checked.
TEST(StackTrie, StacksWhosePrefixHashesCollideStayApart) {
  StackTrie trie;
  Recorded rec;
  auto sink = rec.sink();
  auto colliding_ip = [](std::uint64_t k) { return k << 32 | k; };
  std::mt19937_64 rng(5);
  std::map<std::vector<std::uint64_t>, std::uint32_t> ids;
  for (int i = 0; i < 4000; ++i) {
    std::vector<std::uint64_t> s(1 + rng() % 12);
    for (auto& ip : s) ip = colliding_ip(1 + rng() % 5);
    std::uint32_t id = trie.intern(s.data(), s.size(), sink);
    ASSERT_EQ(rec.stack_of(id), s);
    auto [it, added] = ids.emplace(s, id);
    ASSERT_EQ(it->second, id) << "an equal stack got another id";
  }
  std::map<std::uint32_t, int> uses;
  for (const auto& [stack, id] : ids) ASSERT_EQ(++uses[id], 1) << "two stacks merged into " << id;
  std::vector<std::uint64_t> frames;
  for (const auto& [stack, id] : ids) {
    trie.frames(id, frames);
    ASSERT_EQ(frames, stack);
  }
}

// The distinct_stacks workload's shape: a fixed outer chain, then one bit of
// the path number per level picks one of two call sites.
std::vector<std::uint64_t> binary_path_stack(std::uint32_t path, int levels, int plain) {
  std::vector<std::uint64_t> s{0x1000};  // innermost: the allocation site
  for (int l = 0; l < levels; ++l) s.push_back(0x2000 + 0x40 * l + ((path >> l) & 1) * 8);
  for (int p = 0; p < plain; ++p) s.push_back(0x9000 + 0x10 * p);
  return s;
}

TEST(StackTrie, AMillionDistinctStacksFitInAboutSixteenBytesANode) {
  StackTrie trie;
  std::size_t emitted = 0;
  StackTrie::NewNode count = [&](const StackNode&) { ++emitted; };
  constexpr int kLevels = 20;  // 2^20 = 1,048,576 stacks, 27 frames each
  std::mt19937 rng(3);
  for (std::uint32_t i = 0; i < (1u << kLevels); ++i) {
    std::uint32_t path = rng() & ((1u << kLevels) - 1);
    auto s = binary_path_stack(path, kLevels, 6);
    trie.intern(s.data(), s.size(), count);
  }
  EXPECT_EQ(emitted, trie.size());
  EXPECT_GT(trie.size(), 1'300'000u);  // ~63 % of the paths, 2 nodes each
  // 8-byte nodes, IdIndex at 53-80 % load, chunks: <= 20 bytes a node.
  EXPECT_LE(trie.memory_bytes(), trie.size() * 20) << trie.memory_bytes() << " bytes";
  // A repeat resolves to the same leaf and adds nothing.
  auto s = binary_path_stack(12345, kLevels, 6);
  std::uint32_t a = trie.intern(s.data(), s.size(), count);
  auto other = binary_path_stack(777, kLevels, 6);  // not the last stack walked
  trie.intern(other.data(), other.size(), count);
  std::size_t before = emitted;
  EXPECT_EQ(trie.intern(s.data(), s.size(), count), a);
  EXPECT_EQ(emitted, before);
}

// A program with few stacks pays for the pages its trie wrote, not for
// whole chunks (they were 512 KiB each, cleared when made).
TEST(StackTrie, ASmallTrieHoldsOnlyThePagesItWrote) {
  StackTrie trie;
  StackTrie::NewNode ignore = [](const StackNode&) {};
  for (std::uint32_t path = 0; path < 64; ++path) {
    auto s = binary_path_stack(path, 6, 6);
    trie.intern(s.data(), s.size(), ignore);
  }
  EXPECT_GT(trie.size(), 100u);
  EXPECT_LE(trie.memory_bytes(), 64u * 1024) << trie.memory_bytes() << " bytes";
}

// The index's growth recomputes every node's prefix hash from its parent's.
// A parent one id before its child (the rest of a new stack's frames) is
// the hash just computed; only parents of a later non-adjacent child (a
// branch point: about one a new stack) are kept in the growth's scratch, so
// the distinct_stacks shape (~3 nodes a stack) needs well under the 4 bytes
// a node a copy of every hash would.
TEST(StackTrie, GrowthKeepsOnlyBranchPointHashes) {
  StackTrie trie;
  StackTrie::NewNode ignore = [](const StackNode&) {};
  constexpr int kLevels = 20;
  std::mt19937 rng(11);
  for (std::uint32_t i = 0; i < (1u << 18); ++i) {
    auto s = binary_path_stack(rng() & ((1u << kLevels) - 1), kLevels, 6);
    trie.intern(s.data(), s.size(), ignore);
  }
  ASSERT_GT(trie.size(), 500'000u);
  EXPECT_GT(trie.growth_scratch_bytes(), 0u);
  EXPECT_LE(trie.growth_scratch_bytes(), trie.size() * 2)
      << trie.growth_scratch_bytes() << " bytes for " << trie.size() << " nodes";
}

// Growth re-places every node from recomputed hashes: were one wrong, its
// stack would no longer be found and would get new nodes. Stacks over a
// random tree (parents adjacent and not, shallow and deep), all interned
// again in another order after many growths, each to its first id.
TEST(StackTrie, EveryStackIsFoundAgainAfterManyGrowths) {
  StackTrie trie;
  std::size_t emitted = 0;
  StackTrie::NewNode count = [&](const StackNode&) { ++emitted; };
  std::mt19937_64 rng(13);
  std::vector<std::vector<std::uint64_t>> stacks;
  for (int i = 0; i < 40000; ++i) {
    std::vector<std::uint64_t> s(1 + rng() % 30);
    for (std::size_t k = 0; k < s.size(); ++k)  // outer frames from few ips, inner from many
      s[k] = 0x400000 + (k + 8 >= s.size() ? rng() % 3 : rng() % 500) * 16;
    stacks.push_back(s);
  }
  std::vector<std::uint32_t> ids;
  for (const auto& s : stacks) ids.push_back(trie.intern(s.data(), s.size(), count));
  ASSERT_GT(trie.size(), 100'000u);  // index growths from 1024 slots: a dozen
  const std::size_t nodes = emitted;
  std::vector<std::size_t> order(stacks.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  for (std::size_t i : order)
    ASSERT_EQ(trie.intern(stacks[i].data(), stacks[i].size(), count), ids[i]) << "stack " << i;
  EXPECT_EQ(emitted, nodes);
}

// Big tables come on 2 MiB boundaries (huge pages for the trie's random
// reads) and zeroed, as the index's empty slots need.
TEST(TableMemory, BigTablesAreHugePageAlignedAndZero) {
  TableMemory<std::uint32_t> big(3 << 20);
  ASSERT_NE(big.get(), nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(big.get()) % TableMemory<std::uint32_t>::kHuge, 0u);
  EXPECT_EQ(big.bytes() % TableMemory<std::uint32_t>::kHuge, 0u);
  EXPECT_EQ(big[0], 0u);
  EXPECT_EQ(big[(3 << 20) - 1], 0u);
  big[12345] = 7;
  TableMemory<std::uint32_t> moved = std::move(big);
  EXPECT_EQ(moved[12345], 7u);
  EXPECT_EQ(big.get(), nullptr);
  TableMemory<std::uint64_t> small(100, false);
  EXPECT_EQ(small.bytes(), 4096u);
  EXPECT_EQ(small[99], 0u);
}

}  // namespace
}  // namespace memtrail::runtime
