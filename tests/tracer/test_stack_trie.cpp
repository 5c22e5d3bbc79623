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
