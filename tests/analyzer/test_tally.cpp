// memtrail/tally.hpp: a block count and its bytes move together.
#include <gtest/gtest.h>

#include "memtrail/tally.hpp"

namespace memtrail {
namespace {

TEST(Tally, AddCountsOneBlockOfItsSize) {
  Tally t;
  t.add(100);
  t.add(0);
  t.add(28);
  EXPECT_EQ(t.bytes, 128u);
  EXPECT_EQ(t.blocks, 3u);
}

TEST(Tally, SumsAndCompareFieldByField) {
  Tally a{10, 1}, b{30, 2};
  EXPECT_EQ(a + b, (Tally{40, 3}));
  a += b;
  a += b;
  EXPECT_EQ(a, (Tally{70, 5}));
  EXPECT_NE(a, (Tally{70, 4}));
  EXPECT_EQ(Tally{}, (Tally{0, 0}));
}

}  // namespace
}  // namespace memtrail
