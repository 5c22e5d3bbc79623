// The analyzer's typed ids (memtrail/ids.hpp): what keeps a stack id from
// being passed where a site index is meant, and what makes them usable as
// keys and container indices.
#include <gtest/gtest.h>

#include <deque>
#include <type_traits>
#include <unordered_set>

#include "memtrail/ids.hpp"

namespace memtrail {
namespace {

// No implicit conversion from or to integers, nor between kinds.
static_assert(!std::is_convertible_v<std::uint32_t, SiteId>);
static_assert(!std::is_convertible_v<SiteId, std::uint32_t>);
static_assert(!std::is_convertible_v<StackId, SiteId>);
static_assert(!std::is_convertible_v<PoolId, StackId>);
static_assert(std::is_trivially_copyable_v<SiteId> && sizeof(SiteId) == sizeof(std::uint32_t));

TEST(Ids, CompareAndOrderLikeTheirValues) {
  EXPECT_EQ(SiteId{3}, SiteId{3});
  EXPECT_NE(SiteId{3}, SiteId{4});
  EXPECT_LT(PoolId{1}, PoolId{2});
  EXPECT_GT(StackId{9}, StackId{2});
  EXPECT_EQ(SiteId{}.value, 0u);
}

TEST(Ids, StackZeroMeansNoStack) {
  EXPECT_FALSE(has_stack(kNoStack));
  EXPECT_FALSE(has_stack(StackId{0}));
  EXPECT_TRUE(has_stack(StackId{1}));
}

TEST(Ids, HashAsKeysAndIndexContainers) {
  std::unordered_set<StackId> stacks{StackId{1}, StackId{2}, StackId{1}};
  EXPECT_EQ(stacks.size(), 2u);
  EXPECT_TRUE(stacks.count(StackId{2}));
  EXPECT_FALSE(stacks.count(StackId{3}));

  std::deque<int> sites{10, 20, 30};
  EXPECT_EQ(at(sites, SiteId{2}), 30);
  at(sites, SiteId{0}) = 11;
  EXPECT_EQ(sites[0], 11);
}

}  // namespace
}  // namespace memtrail
