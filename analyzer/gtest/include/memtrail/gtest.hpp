// memtrail/gtest.hpp: per-test memory limits for GoogleTest, in the spirit
// of pytest-memray's markers.
//
//   TEST(Cache, StaysSmall) {
//     MEMTRAIL_LIMIT_MEMORY("24 MiB");  // peak heap of the body must stay below
//     MEMTRAIL_LIMIT_LEAKS("1 KiB");    // bytes per allocation site still live at
//     ...                                // the end of the body must stay below
//   }
//
//   // Or check every test for leaks (main() of a test binary):
//   ::testing::UnitTest::GetInstance()->listeners().Append(
//       new memtrail::gtest::LeakCheckListener("1 B"));
//
// Put a limit first in the body: it measures from its own line to the end of
// the body (its destructor). Both limits are strict, as in memray: a test
// at exactly the limit fails. Failures are ordinary gtest failures (console
// and --gtest_output=xml) naming the limit, the measured bytes and the top
// allocation sites with symbolized stacks.
//
// Measurements come from the memtrail recorder in this process: link the
// `memtrail::gtest` CMake target, which also links libmemtrail_preload.so so
// its malloc/new interpose at load time. Under `memtrail run` the test
// binary's trace is the one `memtrail run` asked for; without it, tracing
// goes to a temporary trace that is deleted at exit (set MEMTRAIL_OUTPUT to
// keep it). docs/ci.md has the details.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace memtrail::gtest {

// True when the recorder traces this process with live-heap tracking, which
// the limits need. `why_inactive()` says what is missing otherwise.
bool active();
std::string why_inactive();

// Fails the current test if the heap bytes allocated since construction and
// live at the same moment ever reach `limit` ("24 MiB", "512", "1.5 GiB").
class MemoryLimit {
 public:
  MemoryLimit(std::string_view limit, const char* file, int line);
  ~MemoryLimit();
  MemoryLimit(const MemoryLimit&) = delete;
  MemoryLimit& operator=(const MemoryLimit&) = delete;

 private:
  std::uint64_t limit_ = 0, since_ns_ = 0;
  const char* file_;
  int line_;
  bool armed_ = false;
};

// Fails the current test if one allocation site (call stack) has `limit`
// bytes or more allocated since construction and still live at destruction.
class LeakLimit {
 public:
  LeakLimit(std::string_view limit, const char* file, int line);
  ~LeakLimit();
  LeakLimit(const LeakLimit&) = delete;
  LeakLimit& operator=(const LeakLimit&) = delete;

 private:
  std::uint64_t limit_ = 0, since_ns_ = 0;
  const char* file_;
  int line_;
  bool armed_ = false;
};

// Checks every test: a site with `per_site_limit` bytes or more allocated
// during the test (fixture included) and live after it fails the test.
class LeakCheckListener : public ::testing::EmptyTestEventListener {
 public:
  explicit LeakCheckListener(std::string_view per_site_limit = "1");
  void OnTestStart(const ::testing::TestInfo& test) override;
  void OnTestEnd(const ::testing::TestInfo& test) override;

 private:
  std::uint64_t limit_ = 1, since_ns_ = 0;
  bool armed_ = false;
};

}  // namespace memtrail::gtest

#define MEMTRAIL_GTEST_CONCAT_(a, b) a##b
#define MEMTRAIL_GTEST_CONCAT(a, b) MEMTRAIL_GTEST_CONCAT_(a, b)
#define MEMTRAIL_LIMIT_MEMORY(limit)                                                       \
  ::memtrail::gtest::MemoryLimit MEMTRAIL_GTEST_CONCAT(memtrail_limit_memory_, __LINE__) { \
    (limit), __FILE__, __LINE__                                                            \
  }
#define MEMTRAIL_LIMIT_LEAKS(limit)                                                     \
  ::memtrail::gtest::LeakLimit MEMTRAIL_GTEST_CONCAT(memtrail_limit_leaks_, __LINE__) { \
    (limit), __FILE__, __LINE__                                                         \
  }
