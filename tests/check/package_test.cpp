// find_package(memtrail) from the build tree: configures, builds and runs
// samples/ci-example with CMake/CTest, and checks that exactly its four
// deliberately failing tests fail, each with the message that says why.
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

// Configures, builds and tests samples/ci-example against `memtrail_dir`.
void expect_ci_example_works(const std::string& memtrail_dir, const std::string& build) {
  std::filesystem::remove_all(build);
  CommandResult configure =
      run_merged("\"" CMAKE_COMMAND "\" -S " EXAMPLE_SOURCE_DIR " -B " + build +
                 " -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -Dmemtrail_DIR=" + memtrail_dir);
  ASSERT_EQ(configure.exit_code, 0) << configure.out;
  CommandResult compile = run_merged("\"" CMAKE_COMMAND "\" --build " + build + " -j2");
  ASSERT_EQ(compile.exit_code, 0) << compile.out;

  CommandResult ctest =
      run_merged("\"" CTEST_COMMAND "\" --test-dir " + build + " --output-on-failure");
  EXPECT_NE(ctest.exit_code, 0);
  const std::string& out = ctest.out;
  EXPECT_TRUE(contains(out, "50% tests passed, 4 tests failed out of 8")) << out;
  for (const char* failing :
       {"leak_limit_fails", "peak_limit_fails", "Cache.LimitMemoryFails", "Cache.LimitLeaksFails"})
    EXPECT_TRUE(contains(out, std::string(" - ") + failing + " (Failed)")) << failing << "\n"
                                                                           << out;
  for (const char* passing : {"leak_limit_passes", "peak_limit_passes", "Cache.LimitMemoryPasses",
                              "Cache.LimitLeaksPasses"})
    EXPECT_FALSE(contains(out, std::string(" - ") + passing + " (Failed)")) << passing;

  EXPECT_TRUE(contains(out,
                       "FAIL leaked-bytes: leaked 4096 bytes (4.00 KiB) in 1 block; limit 1024 "
                       "bytes (1.00 KiB)"))
      << out;
  EXPECT_TRUE(contains(out, "allocate_report(unsigned long) at ")) << out;
  EXPECT_TRUE(contains(out, "FAIL peak-used: peak used 3000")) << out;
  EXPECT_TRUE(contains(out, "limit 2097152 bytes (2.00 MiB)")) << out;
  EXPECT_TRUE(contains(out, "Test was limited to 1.00 MiB (1048576 bytes) but allocated ")) << out;
  EXPECT_TRUE(contains(out, "Test was allowed to leak 1.00 KiB (1024 bytes) per location")) << out;
  EXPECT_TRUE(contains(out, "8.00 KiB (8192 bytes) in 1 block allocated from:")) << out;
  EXPECT_TRUE(contains(out, "remember_forever(unsigned long)")) << out;
  // memtrail_add_test keeps a JUnit report per test.
  EXPECT_TRUE(std::filesystem::exists(build + "/leak_limit_fails.junit.xml"));
}

TEST(Package, CiExampleFromTheBuildTree) {
  expect_ci_example_works(MEMTRAIL_DIR, EXAMPLE_BUILD_DIR "/build-tree");
}

TEST(Package, CiExampleFromTheInstallTree) {
  std::string prefix = EXAMPLE_BUILD_DIR "/prefix";
  std::filesystem::remove_all(prefix);
  CommandResult install =
      run_merged("\"" CMAKE_COMMAND "\" --install " MEMTRAIL_DIR " --prefix " + prefix);
  ASSERT_EQ(install.exit_code, 0) << install.out;
  expect_ci_example_works(prefix + "/lib/cmake/memtrail", EXAMPLE_BUILD_DIR "/install-tree");
  // The installed CLI finds its preload library relative to itself.
  EXPECT_TRUE(std::filesystem::exists(prefix + "/bin/memtrail"));
}

}  // namespace
