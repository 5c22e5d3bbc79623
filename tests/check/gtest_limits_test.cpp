// Drives the gtest_limits binary (memtrail/gtest.hpp) in-process and under
// `memtrail run`, and checks exit codes, messages and gtest's XML.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace {

struct Result {
  int rc = -1;
  std::string out;
};

Result sh(const std::string& command) {
  Result r;
  std::FILE* p = popen((command + " 2>&1").c_str(), "r");
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) r.out.append(buf, n);
  int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// In-process (no MEMTRAIL_OUTPUT) and under `memtrail run`.
class GtestLimits : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("memtrail-gtest-limits-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  Result limits(const std::string& args) {
    std::string prefix = "env -u MEMTRAIL_OUTPUT ";
    if (GetParam()) prefix = std::string(MEMTRAIL_BIN) + " run -o " + dir() + "/run-%p.mtr -- ";
    return sh(prefix + GTEST_LIMITS_BIN " " + args);
  }
  std::string dir() const { return dir_.string(); }
  std::filesystem::path dir_;
};

TEST_P(GtestLimits, PassingLimitsPass) {
  Result r = limits("--gtest_filter=*Passes");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(has(r.out, "[  PASSED  ] 5 tests.")) << r.out;
}

TEST_P(GtestLimits, PeakAtTheLimitFailsWithTheMeasuredPeakAndSite) {
  Result r = limits("--gtest_filter=Limits.PeakAtLimitFails");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(has(r.out,
                  "Test was limited to 64.00 KiB (65536 bytes) but allocated 64.00 KiB "
                  "(65536 bytes) at its peak"))
      << r.out;
  EXPECT_TRUE(has(r.out, "hold_and_free(unsigned long) at ")) << r.out;
}

TEST_P(GtestLimits, PeakOfBlocksLiveTogetherFails) {
  Result r = limits("--gtest_filter=Limits.PeakOfTwoBlocksFails");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(has(r.out, "but allocated 1.17 MiB (1228800 bytes) at its peak")) << r.out;
}

TEST_P(GtestLimits, PerSiteLeakFailsAndLandsInGtestXml) {
  std::string xml = dir() + "/gtest.xml";
  Result r = limits("--gtest_filter=Limits.LeaksPerSiteFails --gtest_output=xml:" + xml);
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(has(r.out,
                  "Test was allowed to leak 1.00 KiB (1024 bytes) per location but at "
                  "least one location leaked more"))
      << r.out;
  EXPECT_TRUE(has(r.out, "1.17 KiB (1200 bytes) in 2 blocks allocated from:")) << r.out;
  EXPECT_TRUE(has(r.out, "leak_from_one_site(int, unsigned long)")) << r.out;
  Result py =
      sh("python3 -c \"import sys, xml.etree.ElementTree as E\n"
         "r = E.parse(sys.argv[1]).getroot()\n"
         "f = r.find('.//testcase/failure')\n"
         "print(r.get('tests'), r.get('failures'), 'per location' in f.get('message'))\" " +
         xml);
  EXPECT_EQ(py.out, "1 1 True\n");
}

TEST_P(GtestLimits, ListenerFailsOnlyTheLeakingTest) {
  Result r = limits("--leak-listener --gtest_filter=Listener.*");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_TRUE(has(r.out, "[       OK ] Listener.CleanTestPasses")) << r.out;
  EXPECT_TRUE(has(r.out, "[  FAILED  ] Listener.LeakingTestFails")) << r.out;
  EXPECT_TRUE(has(r.out, "3.91 KiB (4000 bytes) in 1 block allocated from:")) << r.out;
}

INSTANTIATE_TEST_SUITE_P(InProcessAndUnderRun, GtestLimits, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "MemtrailRun" : "InProcess"; });

TEST(GtestLimitsInProcess, LeavesNoTraceInTheWorkingDirectory) {
  auto cwd = std::filesystem::temp_directory_path() / ("memtrail-cwd-" + std::to_string(getpid()));
  std::filesystem::create_directories(cwd);
  Result r = sh("cd " + cwd.string() +
                " && env -u MEMTRAIL_OUTPUT " GTEST_LIMITS_BIN
                " --gtest_filter=Limits.PeakBelowLimitPasses");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(std::filesystem::is_empty(cwd));
  std::filesystem::remove_all(cwd);
}

}  // namespace
