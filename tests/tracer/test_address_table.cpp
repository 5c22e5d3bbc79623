// AddressTable and AddressSet (memtrail/detail/address_table.hpp,
// address_set.hpp) against std::unordered_map / std::set on random runs:
// repeats, misses, address 0, growth past several index and entry
// generations, removals that move the last entry and shift probe runs.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

#include "memtrail/detail/address_set.hpp"
#include "memtrail/detail/address_table.hpp"

namespace memtrail::detail {
namespace {

struct Payload {
  std::uint64_t a;
  std::uint32_t b;
};

void expect_same(AddressTable<Payload>& table,
                 const std::unordered_map<std::uint64_t, Payload>& ref) {
  ASSERT_EQ(table.size(), ref.size());
  std::size_t seen = 0;
  table.for_each([&](std::uint64_t k, Payload& v) {
    auto it = ref.find(k);
    ASSERT_NE(it, ref.end()) << k;
    EXPECT_EQ(v.a, it->second.a);
    ++seen;
  });
  EXPECT_EQ(seen, ref.size());
  for (auto& [k, v] : ref) {
    Payload* p = table.find(k);
    ASSERT_NE(p, nullptr) << k;
    EXPECT_EQ(p->b, v.b);
  }
}

TEST(AddressTable, RandomRunsAgreeWithAnUnorderedMap) {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    std::mt19937_64 rng(seed);
    AddressTable<Payload> table;
    std::unordered_map<std::uint64_t, Payload> ref;
    const std::uint64_t span = seed % 2 ? 64 : 50000;
    for (std::uint64_t t = 1; t <= 200000; ++t) {
      std::uint64_t r = rng();
      std::uint64_t key = r % 16 == 0 ? 0 : 16 * (1 + (r >> 8) % span);
      switch ((r >> 40) % 4) {
        case 0:
        case 1: {
          auto [v, fresh] = table.try_emplace(key);
          ASSERT_EQ(fresh, !ref.count(key)) << "seed " << seed << " t " << t;
          if (fresh) {
            EXPECT_EQ(v->a, 0u);  // value-initialised
          }
          *v = Payload{t, static_cast<std::uint32_t>(t)};
          ref[key] = *v;
          break;
        }
        case 2: {
          Payload out{};
          bool took = table.take(key, out);
          auto it = ref.find(key);
          ASSERT_EQ(took, it != ref.end()) << "seed " << seed << " t " << t;
          if (took) {
            EXPECT_EQ(out.a, it->second.a);
            ref.erase(it);
          }
          break;
        }
        default:
          if (Payload* v = table.find(key)) {
            ASSERT_TRUE(ref.count(key));
            table.erase_value(v);
            ref.erase(key);
          } else {
            ASSERT_FALSE(ref.count(key));
          }
      }
      if (t % 50000 == 0) expect_same(table, ref);
    }
    expect_same(table, ref);
  }
}

TEST(AddressTable, GrowsToAMillionAndEmptiesAgain) {
  AddressTable<std::uint32_t> table;
  const std::uint64_t n = 1'000'000;
  for (std::uint64_t i = 1; i <= n; ++i)
    *table.try_emplace(i * 48).first = static_cast<std::uint32_t>(i);
  ASSERT_EQ(table.size(), n);
  // Dense entries and a 3/4-full index: ~16 + 8..16 bytes an entry, not a
  // half-full table's 2..4 slots.
  EXPECT_LE(table.mapped_bytes(), n * 48);
  for (std::uint64_t i = 1; i <= n; i += 2) ASSERT_TRUE(table.erase(i * 48));
  for (std::uint64_t i = 1; i <= n; ++i) {
    std::uint32_t* v = table.find(i * 48);
    ASSERT_EQ(v != nullptr, i % 2 == 0) << i;
    if (v) {
      ASSERT_EQ(*v, i);
    }
  }
  AddressTable<std::uint32_t> copy = table;
  table.clear();
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.find(96), nullptr);
  EXPECT_EQ(copy.size(), n / 2);
  EXPECT_EQ(*copy.find(96), 2u);
  AddressTable<std::uint32_t> moved = std::move(copy);
  EXPECT_EQ(*moved.find(96), 2u);
}

struct PoolAddress {
  std::uint64_t address;
  std::uint32_t pool;
  bool operator==(const PoolAddress&) const = default;
};
std::uint64_t address_hash(const PoolAddress& k) {
  return memtrail::detail::address_hash(k.address ^ (std::uint64_t{k.pool} << 47));
}

TEST(AddressTable, TakesACompositeKey) {
  AddressTable<std::uint64_t, PoolAddress> table;
  *table.try_emplace({4096, 1}).first = 1;
  *table.try_emplace({4096, 2}).first = 2;
  EXPECT_EQ(table.size(), 2u);
  std::uint64_t out = 0;
  EXPECT_TRUE(table.take({4096, 2}, out));
  EXPECT_EQ(out, 2u);
  EXPECT_EQ(*table.find({4096, 1}), 1u);
  EXPECT_EQ(table.find({4096, 2}), nullptr);
}

TEST(AddressSet, RandomRunsAgreeWithASet) {
  static AddressSet<1 << 10> set;
  std::set<std::uintptr_t> ref;
  std::mt19937_64 rng(7);
  for (int t = 0; t < 200000; ++t) {
    std::uintptr_t p = 16 * (1 + rng() % 700);
    if (rng() % 2) {
      ASSERT_TRUE(set.insert(p));
      ref.insert(p);
    } else {
      ASSERT_EQ(set.take(p), ref.erase(p) == 1) << t;
    }
    ASSERT_EQ(set.size(), ref.size());
  }
  for (std::uintptr_t p = 16; p <= 16 * 700; p += 16) ASSERT_EQ(set.contains(p), ref.count(p) == 1);
}

// The erased slots of the old design filled the table: after a long churn
// of distinct addresses, a miss probed every slot. Without tombstones the
// set stays as short as its members.
TEST(AddressSet, LongChurnLeavesNoErasedSlots) {
  static AddressSet<1 << 8> set;
  for (std::uintptr_t p = 16; p < 16 * 100000; p += 16) {
    ASSERT_TRUE(set.insert(p));
    ASSERT_TRUE(set.take(p));
  }
  EXPECT_TRUE(set.empty());
  for (std::uintptr_t p = 16; p < 16 * 256; p += 16) ASSERT_TRUE(set.insert(p)) << p;
  EXPECT_FALSE(set.insert(16 * 300));    // full: dropped, one slot stays empty
  EXPECT_FALSE(set.contains(16 * 300));  // and a miss still ends
  EXPECT_TRUE(set.contains(16 * 255));
}

// Lookups on one thread while another inserts and removes neighbours:
// a member that stays is always found (backward shifts move it).
TEST(AddressSet, MembersStayVisibleWhileOthersMove) {
  static AddressSet<1 << 7> set;
  std::vector<std::uintptr_t> fixed;
  for (std::uintptr_t p = 16; p < 16 * 64; p += 16) {
    fixed.push_back(p * 7919);
    set.insert(p * 7919);
  }
  std::atomic<bool> stop{false};
  std::thread churn([&] {
    std::mt19937_64 rng(3);
    while (!stop.load()) {
      std::uintptr_t p = 16 * (100000 + rng() % 40);
      set.insert(p);
      set.take(p);
    }
  });
  for (int round = 0; round < 200000; ++round)
    for (std::uintptr_t p : fixed) ASSERT_TRUE(set.contains(p)) << round;
  stop = true;
  churn.join();
}

}  // namespace
}  // namespace memtrail::detail
