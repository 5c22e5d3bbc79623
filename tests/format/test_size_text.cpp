// The size and count strings every report and error message uses.
#include <gtest/gtest.h>

#include "memtrail/size.hpp"

namespace memtrail {
namespace {

TEST(CountText, SingularForExactlyOne) {
  EXPECT_EQ(count_text(1, "block"), "1 block");
  EXPECT_EQ(count_text(1, "whole chunk"), "1 whole chunk");
  EXPECT_EQ(count_text(0, "block"), "0 blocks");
  EXPECT_EQ(count_text(2, "byte"), "2 bytes");
  EXPECT_EQ(count_text(18446744073709551615ull, "trace"), "18446744073709551615 traces");
}

TEST(FormatSize, BytesBelowOneKibibyteThenTwoDecimals) {
  EXPECT_EQ(format_size(0), "0 B");
  EXPECT_EQ(format_size(1023), "1023 B");
  EXPECT_EQ(format_size(1536), "1.50 KiB");
  EXPECT_EQ(format_size(20ull << 20), "20.00 MiB");
}

TEST(ParseSize, UnitsAreBinaryAndCaseInsensitive) {
  EXPECT_EQ(parse_size("512"), 512u);
  EXPECT_EQ(parse_size("64KiB"), 64u * 1024);
  EXPECT_EQ(parse_size("64 kb"), 64u * 1024);
  EXPECT_EQ(parse_size("1.5 GiB"), 1536ull << 20);
  std::string error;
  EXPECT_FALSE(parse_size("12 XB", &error));
  EXPECT_EQ(error, "'12 XB': unknown unit 'XB' (use B, KiB, MiB, GiB, TiB)");
}

}  // namespace
}  // namespace memtrail
