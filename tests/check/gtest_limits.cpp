// A test binary using memtrail/gtest.hpp, driven by gtest_limits_test.cpp:
// the *Passes tests must pass, the *Fails tests must fail with memray-style
// messages. `--leak-listener` installs LeakCheckListener (Listener.* tests).
#include <cstdlib>
#include <cstring>
#include <vector>

#include "memtrail/gtest.hpp"

namespace {

#define NOINLINE __attribute__((noinline))

NOINLINE void keep(void* p) {
  asm volatile("" : : "r"(p) : "memory");
}

NOINLINE void hold_and_free(std::size_t bytes) {
  void* p = std::malloc(bytes);
  keep(p);
  std::free(p);
}

NOINLINE void leak_once(std::size_t bytes) {
  keep(std::malloc(bytes));
}

// `volatile`: an unrolled loop would make two call sites of one line.
NOINLINE void leak_from_one_site(volatile int times, std::size_t bytes) {
  for (int i = 0; i < times; ++i) keep(std::malloc(bytes));
}

}  // namespace

TEST(Limits, PeakBelowLimitPasses) {
  MEMTRAIL_LIMIT_MEMORY("64 KiB");
  hold_and_free(65535);
}

// memray's rule: the peak must stay strictly below the limit.
TEST(Limits, PeakAtLimitFails) {
  MEMTRAIL_LIMIT_MEMORY("64 KiB");
  hold_and_free(65536);
}

TEST(Limits, PeakOfTwoBlocksFails) {
  MEMTRAIL_LIMIT_MEMORY("1 MiB");
  std::vector<char> a(600 * 1024), b(600 * 1024);
  keep(a.data());
  keep(b.data());
}

TEST(Limits, SequentialBlocksBelowLimitPasses) {
  MEMTRAIL_LIMIT_MEMORY("1 MiB");
  for (int i = 0; i < 10; ++i) hold_and_free(600 * 1024);  // never two at once
}

TEST(Limits, LeakBelowLimitPasses) {
  MEMTRAIL_LIMIT_LEAKS("1 KiB");
  leak_once(1023);
}

TEST(Limits, LeaksPerSiteFails) {
  MEMTRAIL_LIMIT_LEAKS("1 KiB");
  leak_from_one_site(2, 600);  // 1200 bytes from one site
}

TEST(Limits, FreedMemoryPasses) {
  MEMTRAIL_LIMIT_LEAKS("1");
  std::vector<int> v(100000, 1);
  keep(v.data());
}

TEST(Listener, CleanTestPasses) {
  std::vector<int> v(1000, 1);
  keep(v.data());
}

TEST(Listener, LeakingTestFails) {
  leak_once(4000);
}

int main(int argc, char** argv) {
  bool listener = false;
  for (int i = 1; i < argc; ++i) listener |= std::strcmp(argv[i], "--leak-listener") == 0;
  ::testing::InitGoogleTest(&argc, argv);
  if (listener)
    ::testing::UnitTest::GetInstance()->listeners().Append(
        new memtrail::gtest::LeakCheckListener("1 B"));
  return RUN_ALL_TESTS();
}
