// Issue 27: integers that start-up code stored into a module's data before
// the tracer started (libc's cache sizes) can lie inside a block allocated
// later, in a non-PIE program's brk heap; a word still holding its start-up
// value points at no such block (start_values.hpp). Here a linked library's
// constructor stores them into its own .bss (start_ints_lib.c): the leak
// must read definitely lost in every run, from the suite's four places.
// The preinit_array shape is start_integers in the leak suite; glibc's own
// cache-size integers, libc_integers; the kernel's aux vector, on the main
// thread's stack above the program's frames, aux_integers. glibc's locale
// data (locale_digits) is no start value but is run the same way: its
// integer is told by the block's shape (glibc_locale_data.hpp).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "leak_tools.hpp"

namespace memtrail::leaks {
namespace {

const std::string kMemtrail = MEMTRAIL_BIN;
const std::string kBinDir = LEAK_BIN_DIR;
constexpr int kRuns = 10;

void expect_direct_in_every_run(const std::string& binary) {
  TempDir traces("start-values"), places("start-values-place");
  ASSERT_FALSE(traces.path().empty());
  const std::vector<RunPlace> where = run_places(places.path(), kBinDir, binary);
  ASSERT_FALSE(where.empty());
  const MemtrailCounts expected = MemtrailCounts::from({{1, 9000}, {}, {}, {}});
  for (int i = 0; i < kRuns; ++i) {
    const RunPlace& place = where[i % where.size()];
    SCOPED_TRACE("run " + std::to_string(i + 1) + " of " + binary + " (" + place.label + ")");
    MemtrailRun r = memtrail_run(kMemtrail, place, binary, traces.path(), false);
    ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.counts, expected) << "memtrail run's stderr (the scan's possibly-lost blocks):\n"
                                  << r.run.err;
  }
}

TEST(StartValuesRun, LinkedLibrarysStartIntegersDoNotReachALaterLeakO0) {
  expect_direct_in_every_run("leak_start_integers_lib_O0");
}

TEST(StartValuesRun, LinkedLibrarysStartIntegersDoNotReachALaterLeakO2) {
  expect_direct_in_every_run("leak_start_integers_lib_O2");
}

// A program whose leak covers a start-up integer of glibc's data
// (libc_integers.c) or of the kernel's aux vector (aux_integers.c), with
// the address space not randomized so that the brk heap lies below them in
// every run: definitely lost, `leak` bytes, beside `reachable` blocks (-1:
// any number).
void expect_start_integers_never_reach(const std::string& binary, std::int64_t leak,
                                       std::int64_t reachable) {
  if (run_command("setarch -R true").exit_code != 0)
    GTEST_SKIP() << "setarch -R (no address randomization) is not allowed here";
  TempDir traces("start-values"), places("start-values-place");
  ASSERT_FALSE(traces.path().empty());
  std::vector<RunPlace> where = run_places(places.path(), kBinDir, binary);
  ASSERT_FALSE(where.empty());
  for (RunPlace& place : where) place.env = "setarch -R env " + place.env;
  for (int i = 0; i < kRuns; ++i) {
    const RunPlace& place = where[i % where.size()];
    SCOPED_TRACE("run " + std::to_string(i + 1) + " of " + binary + " (" + place.label + ")");
    MemtrailRun r = memtrail_run(kMemtrail, place, binary, traces.path(), false);
    if (r.run.exit_code == 77)
      GTEST_SKIP() << binary << ": no such integer above the brk heap on this machine (or no "
                   << "C.UTF-8 locale)";
    ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.counts.direct, (Amount{1, leak})) << r.run.err;
    EXPECT_EQ(r.counts.indirect, (Amount{0, 0}));
    EXPECT_EQ(r.counts.possible, (Amount{0, 0})) << r.run.err;
    if (reachable >= 0) {
      EXPECT_EQ(r.counts.reachable.blocks, reachable);
    }
  }
}

// Beside the leak, libc_integers' filler block is reachable.
TEST(StartValuesRun, LibcsStartIntegersDoNotReachALaterLeakO0) {
  expect_start_integers_never_reach("leak_libc_integers_O0", 2000, 1);
}

TEST(StartValuesRun, LibcsStartIntegersDoNotReachALaterLeakO2) {
  expect_start_integers_never_reach("leak_libc_integers_O2", 2000, 1);
}

// The aux vector the kernel wrote above argv and envp (AT_HWCAP's CPUID
// bits): on the exiting thread's stack, above the program's frames.
TEST(StartValuesRun, AuxVectorIntegersDoNotReachALaterLeakO0) {
  expect_start_integers_never_reach("leak_aux_integers_O0", 512 * 1024, 0);
}

TEST(StartValuesRun, AuxVectorIntegersDoNotReachALaterLeakO2) {
  expect_start_integers_never_reach("leak_aux_integers_O2", 512 * 1024, 0);
}

// The digit widths at the end of glibc's LC_CTYPE locale data (0x01010101
// in a UTF-8 locale), which setlocale() allocates; the locale's blocks are
// reachable beside the leak (their number is glibc's).
TEST(LibcIntegersRun, LocaleDigitWidthsDoNotReachALaterLeakO0) {
  expect_start_integers_never_reach("leak_locale_digits_O0", 512 * 1024, -1);
}

TEST(LibcIntegersRun, LocaleDigitWidthsDoNotReachALaterLeakO2) {
  expect_start_integers_never_reach("leak_locale_digits_O2", 512 * 1024, -1);
}

}  // namespace
}  // namespace memtrail::leaks
