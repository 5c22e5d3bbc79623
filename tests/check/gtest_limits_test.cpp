// Drives the gtest_limits binary (memtrail/gtest.hpp) in-process and under
// `memtrail run`, and checks exit codes, messages and gtest's XML.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "run_command.hpp"

namespace {

using memtrail::test::CommandResult;
using memtrail::test::contains;
// stdout and stderr together: the messages are checked wherever they go.
using memtrail::test::run_merged;

// In-process (no MEMTRAIL_OUTPUT) and under `memtrail run`.
class GtestLimits : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("memtrail-gtest-limits-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  CommandResult limits(const std::string& args) {
    std::string prefix = "env -u MEMTRAIL_OUTPUT ";
    if (GetParam()) prefix = std::string(MEMTRAIL_BIN) + " run -o " + dir() + "/run-%p.mtr -- ";
    return run_merged(prefix + GTEST_LIMITS_BIN " " + args);
  }
  std::string dir() const { return dir_.string(); }
  std::filesystem::path dir_;
};

TEST_P(GtestLimits, PassingLimitsPass) {
  CommandResult r = limits("--gtest_filter=*Passes");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "[  PASSED  ] 5 tests.")) << r.out;
}

TEST_P(GtestLimits, PeakAtTheLimitFailsWithTheMeasuredPeakAndSite) {
  CommandResult r = limits("--gtest_filter=Limits.PeakAtLimitFails");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(contains(r.out,
                       "Test was limited to 64.00 KiB (65536 bytes) but allocated 64.00 KiB "
                       "(65536 bytes) at its peak"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "hold_and_free(unsigned long) at ")) << r.out;
}

TEST_P(GtestLimits, PeakOfBlocksLiveTogetherFails) {
  CommandResult r = limits("--gtest_filter=Limits.PeakOfTwoBlocksFails");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(contains(r.out, "but allocated 1.17 MiB (1228800 bytes) at its peak")) << r.out;
}

TEST_P(GtestLimits, PerSiteLeakFailsAndLandsInGtestXml) {
  std::string xml = dir() + "/gtest.xml";
  CommandResult r = limits("--gtest_filter=Limits.LeaksPerSiteFails --gtest_output=xml:" + xml);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(contains(r.out,
                       "Test was allowed to leak 1.00 KiB (1024 bytes) per location but at "
                       "least one location leaked more"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "1.17 KiB (1200 bytes) in 2 blocks allocated from:")) << r.out;
  EXPECT_TRUE(contains(r.out, "leak_from_one_site(int, unsigned long)")) << r.out;
  CommandResult py = run_merged(
      "python3 -c \"import sys, xml.etree.ElementTree as E\n"
      "r = E.parse(sys.argv[1]).getroot()\n"
      "f = r.find('.//testcase/failure')\n"
      "print(r.get('tests'), r.get('failures'), 'per location' in f.get('message'))\" " +
      xml);
  EXPECT_EQ(py.out, "1 1 True\n");
}

TEST_P(GtestLimits, ListenerFailsOnlyTheLeakingTest) {
  CommandResult r = limits("--leak-listener --gtest_filter=Listener.*");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(contains(r.out, "[       OK ] Listener.CleanTestPasses")) << r.out;
  EXPECT_TRUE(contains(r.out, "[  FAILED  ] Listener.LeakingTestFails")) << r.out;
  EXPECT_TRUE(contains(r.out, "3.91 KiB (4000 bytes) in 1 block allocated from:")) << r.out;
}

INSTANTIATE_TEST_SUITE_P(InProcessAndUnderRun, GtestLimits, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "MemtrailRun" : "InProcess"; });

TEST(GtestLimitsInProcess, LeavesNoTraceInTheWorkingDirectory) {
  auto cwd = std::filesystem::temp_directory_path() / ("memtrail-cwd-" + std::to_string(getpid()));
  std::filesystem::create_directories(cwd);
  CommandResult r = run_merged("cd " + cwd.string() +
                               " && env -u MEMTRAIL_OUTPUT " GTEST_LIMITS_BIN
                               " --gtest_filter=Limits.PeakBelowLimitPasses");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(std::filesystem::is_empty(cwd));
  std::filesystem::remove_all(cwd);
}

}  // namespace

// The in-process trace lives in TMPDIR and goes at exit with everything made
// for it: a failing limit symbolizes its sites, which must not leave a
// TRACE.symbols cache behind.
TEST(GtestLimitsInProcess, LeavesNothingInTmpdir) {
  auto tmp =
      std::filesystem::temp_directory_path() / ("memtrail-tmpdir-" + std::to_string(getpid()));
  std::filesystem::create_directories(tmp);
  CommandResult r = run_merged("env -u MEMTRAIL_OUTPUT TMPDIR=" + tmp.string() +
                               " " GTEST_LIMITS_BIN " --gtest_filter=Limits.LeaksPerSiteFails");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(contains(r.out, "leak_from_one_site(int, unsigned long)")) << r.out;
  std::string left;
  for (const auto& entry : std::filesystem::directory_iterator(tmp))
    left += " " + entry.path().filename().string();
  EXPECT_EQ(left, "") << "left in TMPDIR";
  std::filesystem::remove_all(tmp);
}
