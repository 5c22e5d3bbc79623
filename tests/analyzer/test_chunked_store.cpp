// ChunkedStore (analyzer/src/chunked_store.hpp): the analysis pass's site
// store. Indices across chunk boundaries reach the element appended there,
// elements never move while the store grows, and drain() hands every
// element over once, in order.
#include "chunked_store.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace memtrail::detail {
namespace {

struct Item {
  std::uint64_t value = 0;
  std::string text;  // moved out by drain(), not copied
};

using SmallStore = ChunkedStore<Item, 2>;  // 4 elements a chunk

TEST(ChunkedStore, IndexReachesEachAppendedElementAcrossChunks) {
  SmallStore store;
  EXPECT_TRUE(store.empty());
  for (std::uint64_t i = 0; i < 11; ++i) {
    Item& item = store.emplace_back();
    EXPECT_EQ(item.value, 0u);  // a fresh element is default-constructed
    item.value = i * 10;
    EXPECT_EQ(&store.back(), &item);
  }
  ASSERT_EQ(store.size(), 11u);
  for (std::uint64_t i = 0; i < 11; ++i) EXPECT_EQ(store[i].value, i * 10) << i;
}

TEST(ChunkedStore, ElementsStayInPlaceWhileTheStoreGrows) {
  SmallStore store;
  Item* first = &store.emplace_back();
  Item* fourth = nullptr;
  for (int i = 1; i < 4; ++i) fourth = &store.emplace_back();
  for (int i = 0; i < 100; ++i) store.emplace_back();
  EXPECT_EQ(&store[0], first);
  EXPECT_EQ(&store[3], fourth);
}

TEST(ChunkedStore, DrainHandsEveryElementOverOnceInOrderAndEmptiesTheStore) {
  for (std::size_t n : {0u, 1u, 4u, 5u, 9u}) {  // empty, partial and full last chunks
    SmallStore store;
    for (std::size_t i = 0; i < n; ++i) {
      Item& item = store.emplace_back();
      item.value = i;
      item.text = "site " + std::to_string(i);
    }
    std::vector<Item> out;
    store.drain([&](Item&& item) { out.push_back(std::move(item)); });
    ASSERT_EQ(out.size(), n);
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_EQ(out[i].value, i);
      EXPECT_EQ(out[i].text, "site " + std::to_string(i));
    }
    EXPECT_TRUE(store.empty());
    // Usable again after a drain.
    store.emplace_back().value = 7;
    EXPECT_EQ(store[0].value, 7u);
  }
}

TEST(ChunkedStore, OverAlignedElementsKeepTheirAlignment) {
  struct alignas(64) Line {
    std::uint64_t v = 0;
  };
  ChunkedStore<Line, 3> store;
  for (int i = 0; i < 20; ++i)
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&store.emplace_back()) % 64, 0u);
}

}  // namespace
}  // namespace memtrail::detail
