// JavaCPP-style limits: per resource (set_max_bytes) and process-wide
// (MEMTRAIL_MAX_BYTES, MEMTRAIL_MAX_PHYSICAL_BYTES).
#include <gtest/gtest.h>

#include <cstdlib>

#include "memtrail/alloc/caching_pool.hpp"
#include "memtrail/alloc/host_resources.hpp"
#include "memtrail/alloc/limits.hpp"
#include "memtrail/alloc/virtual_resource.hpp"

namespace {

using namespace memtrail::alloc;
constexpr std::uint64_t kKiB = 1024, kMiB = 1ull << 20;

// Restores the process-wide limits after each test.
class Limits : public ::testing::Test {
 protected:
  void TearDown() override { ProcessLimits::instance().configure(LimitConfig{}); }
};

TEST_F(Limits, PerResourceMaxBytes) {
  SystemHeapResource heap("host heap");
  heap.set_max_bytes(kMiB);
  void* a = heap.allocate(600 * kKiB);
  try {
    (void)heap.allocate(600 * kKiB);
    ADD_FAILURE() << "no error";
  } catch (const LimitError& e) {
    EXPECT_EQ(e.which(), LimitError::Which::resource_max_bytes);
    EXPECT_STREQ(e.what(),
                 "memtrail: max_bytes of 'host heap' exceeded: in use 600.00 KiB + request "
                 "600.00 KiB > limit 1.00 MiB");
    EXPECT_EQ(e.requested(), 600 * kKiB);
    EXPECT_EQ(e.in_use(), 600 * kKiB);
    EXPECT_EQ(e.limit(), kMiB);
  }
  EXPECT_THROW((void)heap.allocate(600 * kKiB), std::bad_alloc);  // catchable as bad_alloc
  heap.deallocate(a, 600 * kKiB);
  void* b = heap.allocate(900 * kKiB);  // room again
  heap.deallocate(b, 900 * kKiB);
  EXPECT_EQ(heap.bytes_in_use(), 0u);
}

TEST_F(Limits, ProcessWideMaxBytes) {
  MmapResource mmap;
  const std::uint64_t base = ProcessLimits::instance().charged_bytes();
  ProcessLimits::instance().configure({base + 3 * kMiB, 0});
  void* a = mmap.allocate(2 * kMiB);
  try {
    (void)mmap.allocate(2 * kMiB);
    ADD_FAILURE() << "no error";
  } catch (const LimitError& e) {
    EXPECT_EQ(e.which(), LimitError::Which::process_max_bytes);
    EXPECT_EQ(
        std::string(e.what()).rfind("memtrail: MEMTRAIL_MAX_BYTES exceeded by 'mmap': in use ", 0),
        0u)
        << e.what();
    EXPECT_EQ(e.in_use(), base + 2 * kMiB);
  }
  mmap.deallocate(a, 2 * kMiB);
  EXPECT_EQ(ProcessLimits::instance().charged_bytes(), base);
  // The virtual upstream touches no memory and is not charged.
  VirtualResource device;
  void* v = device.allocate(1ull << 30);
  device.deallocate(v, 1ull << 30);
}

TEST_F(Limits, ProcessWideMaxPhysicalBytes) {
  SystemHeapResource heap;
  ProcessLimits::instance().configure({0, 4096});  // any process has more RSS than this
  try {
    (void)heap.allocate(64);
    ADD_FAILURE() << "no error";
  } catch (const LimitError& e) {
    EXPECT_EQ(e.which(), LimitError::Which::process_max_physical_bytes);
    EXPECT_NE(std::string(e.what()).find("MEMTRAIL_MAX_PHYSICAL_BYTES exceeded by 'system heap': "
                                         "physical bytes (RSS) "),
              std::string::npos)
        << e.what();
    EXPECT_GT(e.in_use(), 4096u);
  }
}

TEST_F(Limits, PoolsOverALimitedUpstreamReportTheLimit) {
  SystemHeapResource heap;
  heap.set_max_bytes(4 * kMiB);
  CachingPool pool(heap, CachingConfig{});
  try {
    pool.malloc(3 * kMiB);  // needs a 20 MiB segment
    ADD_FAILURE() << "no error";
  } catch (const LimitError& e) {
    EXPECT_EQ(e.which(), LimitError::Which::resource_max_bytes);
    EXPECT_EQ(e.requested(), 20 * kMiB);
  }
  EXPECT_EQ(pool.memory_stats().at("num_ooms"), 1);
}

TEST_F(Limits, EnvironmentParsing) {
  ::setenv("MEMTRAIL_MAX_BYTES", "1.5 GiB", 1);
  ::setenv("MEMTRAIL_MAX_PHYSICAL_BYTES", "8G", 1);
  LimitConfig c = LimitConfig::from_environment();
  EXPECT_EQ(c.max_bytes, 1610612736u);
  EXPECT_EQ(c.max_physical_bytes, 8ull << 30);
  ::setenv("MEMTRAIL_MAX_BYTES", "12 XB", 1);
  try {
    LimitConfig::from_environment();
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what, "MEMTRAIL_MAX_BYTES='12 XB': unknown unit 'XB' (use B, KiB, MiB, GiB, TiB)");
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
  ::unsetenv("MEMTRAIL_MAX_BYTES");
  ::unsetenv("MEMTRAIL_MAX_PHYSICAL_BYTES");
  c = LimitConfig::from_environment();
  EXPECT_EQ(c.max_bytes, 0u);
}

}  // namespace
