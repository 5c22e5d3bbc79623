// The pools' internal structures against simple oracles, with fixed seeds:
// BestFitBins (exact size classes + heaps + ordered set) must give the same
// best fit as a std::set in (size, address) order after every operation;
// AddrMap must agree with std::unordered_map through insert/erase churn and
// growth; the spin locks must exclude each other and let the recursive one
// be re-entered.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "addr_map.hpp"
#include "best_fit_bins.hpp"
#include "spin_lock.hpp"

namespace {

using namespace memtrail::alloc::detail;

struct Item {
  std::uint64_t size = 0, addr = 0;
  std::uint32_t pos = 0;
  bool inside = false;
};
struct ItemAccess {
  static std::uint64_t size(const Item* i) { return i->size; }
  static std::uint64_t addr(const Item* i) { return i->addr; }
  static std::uint32_t& pos(Item* i) { return i->pos; }
};
using Bins = BestFitBins<Item*, ItemAccess>;
using Oracle = std::set<std::pair<std::uint64_t, std::uint64_t>>;  // (size, addr)

Item* oracle_first(const Oracle& oracle, std::vector<Item>& items, std::uint64_t size) {
  auto it = oracle.lower_bound({size, 0});
  if (it == oracle.end()) return nullptr;
  for (Item& i : items)
    if (i.inside && i.size == it->first && i.addr == it->second) return &i;
  return nullptr;
}

// granule 512, 64 classes (sizes up to 32 KiB exact), sizes up to 80 KiB so
// the ordered set is exercised too; many equal sizes so heaps get deep.
void run_random(std::uint32_t classes, std::uint64_t seed, bool pending_slot = true) {
  constexpr std::uint64_t kGranule = 512;
  NodeCache nodes;
  Bins bins(ItemAccess{}, kGranule, classes, &nodes, pending_slot);
  Oracle oracle;
  std::vector<Item> items(600);
  std::mt19937_64 rng(seed);
  for (std::size_t k = 0; k < items.size(); ++k) {
    items[k].addr = (k + 1) * 4096 + (rng() % 8) * kGranule;  // distinct
    items[k].size = kGranule * (1 + rng() % 160);
  }
  for (int step = 0; step < 40000; ++step) {
    Item& item = items[rng() % items.size()];
    if (item.inside) {
      bins.erase(&item);
      oracle.erase({item.size, item.addr});
      item.inside = false;
    } else {
      if (rng() % 4 == 0) item.size = kGranule * (1 + rng() % 160);  // sizes change while out
      bins.insert(&item);
      oracle.insert({item.size, item.addr});
      item.inside = true;
    }
    ASSERT_EQ(bins.size(), oracle.size());
    const std::uint64_t want =
        rng() % 3 == 0 ? 1 + rng() % (kGranule * 170) : kGranule * (1 + rng() % 170);
    Item* got = bins.first_at_least(want, nullptr);
    Item* expect = oracle_first(oracle, items, want);
    ASSERT_EQ(got, expect) << "step " << step << " size " << want;
    ASSERT_EQ(bins.largest_size(), oracle.empty() ? 0 : oracle.rbegin()->first);
  }
  std::vector<Item*> sorted;
  bins.append_sorted(sorted);
  ASSERT_EQ(sorted.size(), oracle.size());
  auto it = oracle.begin();
  for (Item* i : sorted) {
    EXPECT_EQ(i->size, it->first);
    EXPECT_EQ(i->addr, it->second);
    ++it;
  }
}

TEST(BestFitBins, AgreesWithOrderedSet) {
  run_random(64, 1);
  run_random(64, 2);
  run_random(64, 6, /*pending_slot=*/false);
}

TEST(BestFitBins, ManyClassesSpanningSummaryWords) {
  run_random(8192, 3);  // more than 64 bitmap words: the summary level is searched
}

TEST(BestFitBins, SetOnly) {
  run_random(0, 4);  // classes == 0: every size in the ordered set
  run_random(0, 7, /*pending_slot=*/false);
}

// The pending slot (the block inserted last) must win or lose against the
// classes exactly as the (size, address) order says, ties included.
TEST(BestFitBins, PendingSlotKeepsTheOrder) {
  NodeCache nodes;
  Bins bins(ItemAccess{}, 512, 16, &nodes);
  Item a{1024, 8000}, b{1024, 4000}, c{1536, 100};
  bins.insert(&a);
  bins.insert(&b);  // b pending, a in the classes: same size, b lower address
  EXPECT_EQ(bins.first_at_least(1024, nullptr), &b);
  bins.insert(&c);  // c pending (larger), b and a in the classes
  EXPECT_EQ(bins.first_at_least(1024, nullptr), &b);
  EXPECT_EQ(bins.first_at_least(1025, nullptr), &c);
  EXPECT_EQ(bins.largest_size(), 1536u);
  bins.erase(&b);
  EXPECT_EQ(bins.first_at_least(512, nullptr), &a);
  bins.erase(&c);  // the pending block leaves
  EXPECT_EQ(bins.first_at_least(1025, nullptr), nullptr);
  EXPECT_EQ(bins.size(), 1u);
  std::vector<Item*> sorted;
  bins.append_sorted(sorted);
  ASSERT_EQ(sorted.size(), 1u);
  EXPECT_EQ(sorted[0], &a);
}

TEST(BestFitBins, TiesGoToLowestAddress) {
  NodeCache nodes;
  Bins bins(ItemAccess{}, 512, 16, &nodes);
  std::vector<Item> items(5);
  const std::uint64_t addrs[] = {9000, 3000, 7000, 1000, 5000};
  for (int k = 0; k < 5; ++k) {
    items[k].size = 1024;
    items[k].addr = addrs[k];
    bins.insert(&items[k]);
  }
  for (std::uint64_t expect : {1000, 3000, 5000, 7000, 9000}) {
    Item* got = bins.first_at_least(600, nullptr);
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(got->addr, expect);
    bins.erase(got);
  }
  EXPECT_TRUE(bins.empty());
  EXPECT_EQ(bins.first_at_least(512, nullptr), nullptr);
}

TEST(AddrMap, AgreesWithUnorderedMap) {
  AddrMap<std::uint64_t> map;
  std::unordered_map<std::uint64_t, std::uint64_t> oracle;
  std::mt19937_64 rng(5);
  std::vector<std::uint64_t> keys;
  for (int step = 0; step < 200000; ++step) {
    const bool grow = keys.size() < 3000 && (keys.empty() || rng() % 100 < 55);
    if (grow) {
      std::uint64_t key;
      do key = (1 + rng() % (1u << 20)) << 9;  // 512-aligned like block addresses
      while (oracle.count(key));
      map.insert(key, step);
      oracle[key] = static_cast<std::uint64_t>(step);
      keys.push_back(key);
    } else {
      // A third of the erasures take keys.back(), which right after an
      // insertion is the key in the map's front slot.
      const std::size_t k = rng() % 3 == 0 ? keys.size() - 1 : rng() % keys.size();
      std::uint64_t* v = map.find(keys[k]);
      ASSERT_NE(v, nullptr);
      ASSERT_EQ(*v, oracle[keys[k]]);
      map.erase(v);
      oracle.erase(keys[k]);
      keys[k] = keys.back();
      keys.pop_back();
    }
    ASSERT_EQ(map.size(), oracle.size());
    ASSERT_EQ(map.find(0), nullptr);  // key 0 marks the empty front slot
    const std::uint64_t probe = (1 + rng() % (1u << 20)) << 9;
    std::uint64_t* v = map.find(probe);
    ASSERT_EQ(v != nullptr, oracle.count(probe) == 1) << "step " << step;
    if (v) {
      ASSERT_EQ(*v, oracle[probe]);
    }
  }
  std::size_t seen = 0;
  map.for_each([&](std::uint64_t key, std::uint64_t value) {
    ++seen;
    EXPECT_EQ(oracle.at(key), value);
  });
  EXPECT_EQ(seen, oracle.size());
}

template <typename Lock>
void check_exclusion() {
  Lock lock;
  std::uint64_t counter = 0;  // plain: a data race if the lock fails
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 50000; ++i) {
        lock.lock();
        counter = counter + 1;
        lock.unlock();
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(counter, 200000u);
}

TEST(SpinLocks, MutualExclusion) {
  check_exclusion<SpinLock>();
  check_exclusion<RecursiveSpinLock>();
}

TEST(SpinLocks, RecursiveReentryThenRelease) {
  RecursiveSpinLock lock;
  lock.lock();
  lock.lock();  // a free-memory callback calling back into the pool
  lock.unlock();
  bool other_got_it = false;
  std::thread t([&] {
    lock.lock();  // must wait for the outer unlock below
    other_got_it = true;
    lock.unlock();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(other_got_it);
  lock.unlock();
  t.join();
  EXPECT_TRUE(other_got_it);
}

}  // namespace
