// CachingConfig parsing (PYTORCH_CUDA_ALLOC_CONF syntax, c10's rules) and
// the size rounding it drives.
#include <gtest/gtest.h>

#include <cstdlib>

#include "memtrail/alloc/caching_pool.hpp"
#include "memtrail/alloc/virtual_resource.hpp"

namespace {

using namespace memtrail::alloc;
constexpr std::uint64_t kMiB = 1ull << 20;

std::string error_of(const char* text) {
  try {
    CachingConfig::parse(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CachingConfig, KeysAndValues) {
  auto c = CachingConfig::parse(
      "max_split_size_mb:128, max_non_split_rounding_mb:40,garbage_collection_threshold:0.6,"
      "expandable_segments:True,backend:native,release_lock_on_cudamalloc:False");
  EXPECT_EQ(c.max_split_size, 128 * kMiB);
  EXPECT_EQ(c.max_non_split_rounding, 40 * kMiB);
  EXPECT_DOUBLE_EQ(c.garbage_collection_threshold, 0.6);
  EXPECT_TRUE(c.expandable_segments);
  EXPECT_EQ(CachingConfig::parse("").max_split_size, UINT64_MAX);
  EXPECT_EQ(CachingConfig::parse("max_split_size_mb:20").max_split_size, 20 * kMiB);
}

TEST(CachingConfig, ErrorsNameTheKey) {
  EXPECT_EQ(error_of("foo:1"), "unknown key 'foo'");
  EXPECT_EQ(error_of("max_split_size_mb:19"),
            "max_split_size_mb: 19 is too small, it must be at least 20 (MB)");
  EXPECT_EQ(error_of("max_split_size_mb:abc"),
            "max_split_size_mb: 'abc' is not a non-negative integer");
  EXPECT_EQ(error_of("expandable_segments:yes"),
            "expandable_segments: expected True or False, found 'yes'");
  EXPECT_EQ(error_of("garbage_collection_threshold:1.0"),
            "garbage_collection_threshold: 1.0 is out of range, it must be in (0.0, 1.0)");
  EXPECT_EQ(error_of("roundup_power2_divisions:3"),
            "roundup_power2_divisions: 3 divisions is not a power of 2");
  EXPECT_EQ(error_of("roundup_power2_divisions:[3:2]"),
            "roundup_power2_divisions: interval 3 (MB) is not a power of 2");
  EXPECT_EQ(error_of("max_split_size_mb"), "max_split_size_mb: expected ':' but the string ended");
  EXPECT_EQ(error_of("backend:cudaMallocAsync"),
            "backend: cudaMallocAsync is not modelled by memtrail's CachingPool");
}

TEST(CachingConfig, RoundupDivisionsFollowTheCodeNotTheDocs) {
  auto all = CachingConfig::parse("roundup_power2_divisions:4");
  EXPECT_EQ(all.divisions_for(1), 4u);
  EXPECT_EQ(all.divisions_for(100ull << 30), 4u);

  // Key K sets the interval [K MB, 2K MB); the first key also fills the
  // intervals below it; '>' fills from the last listed interval inclusive,
  // so it overwrites 1024's 4 with 8.
  auto c = CachingConfig::parse("roundup_power2_divisions:[256:1,512:2,1024:4,>:8]");
  EXPECT_EQ(c.divisions_for(1 * kMiB), 1u);
  EXPECT_EQ(c.divisions_for(256 * kMiB - 1), 1u);
  EXPECT_EQ(c.divisions_for(256 * kMiB), 1u);
  EXPECT_EQ(c.divisions_for(512 * kMiB - 1), 1u);
  EXPECT_EQ(c.divisions_for(512 * kMiB), 2u);
  EXPECT_EQ(c.divisions_for(1024 * kMiB - 1), 2u);
  EXPECT_EQ(c.divisions_for(1024 * kMiB), 8u);
  EXPECT_EQ(c.divisions_for(64ull << 30), 8u);

  auto low = CachingConfig::parse("roundup_power2_divisions:[1:2,2:4,>:8]");
  EXPECT_EQ(low.divisions_for(1536 * 1024), 2u);  // < 2 MiB: interval 0
  EXPECT_EQ(low.divisions_for(2 * kMiB), 8u);     // 2's 4 overwritten by '>'
  EXPECT_EQ(low.divisions_for(32ull << 30), 8u);
}

TEST(CachingConfig, EnvironmentVariable) {
  ::setenv("MEMTRAIL_POOL_CONF", "max_split_size_mb:64", 1);
  EXPECT_EQ(CachingConfig::from_environment().max_split_size, 64 * kMiB);
  ::setenv("MEMTRAIL_POOL_CONF", "nope:1", 1);
  try {
    CachingConfig::from_environment();
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "MEMTRAIL_POOL_CONF: unknown key 'nope'");
  }
  ::unsetenv("MEMTRAIL_POOL_CONF");
  EXPECT_EQ(CachingConfig::from_environment().max_split_size, UINT64_MAX);
}

TEST(CachingRounding, RoundSizeAndSegmentSize) {
  VirtualResource device;
  CachingPool plain(device, CachingConfig{});
  EXPECT_EQ(plain.round_size(1), 512u);
  EXPECT_EQ(plain.round_size(512), 512u);
  EXPECT_EQ(plain.round_size(513), 1024u);
  EXPECT_EQ(plain.round_size(1200), 1536u);
  CachingPool div4(device, CachingConfig::parse("roundup_power2_divisions:4"));
  EXPECT_EQ(div4.round_size(1200), 1536u);  // 1200 <= 512*4: plain 512 rounding, not 1280
  EXPECT_EQ(div4.round_size(3000), 3072u);
  EXPECT_EQ(div4.round_size(1153434), 1310720u);   // 1.1 MiB -> 1.25 MiB
  EXPECT_EQ(div4.round_size(4 * kMiB), 4 * kMiB);  // powers of two stay
  EXPECT_EQ(div4.round_size(4 * kMiB + 1), 5 * kMiB);
  EXPECT_EQ(CachingPool::allocation_size(kMiB), 2 * kMiB);
  EXPECT_EQ(CachingPool::allocation_size(kMiB + 512), 20 * kMiB);
  EXPECT_EQ(CachingPool::allocation_size(10 * kMiB - 512), 20 * kMiB);
  EXPECT_EQ(CachingPool::allocation_size(10 * kMiB), 10 * kMiB);
  EXPECT_EQ(CachingPool::allocation_size(11 * kMiB), 12 * kMiB);
}

}  // namespace
