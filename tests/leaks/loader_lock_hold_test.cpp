// Issue 27 item 2: a program thread that holds the dynamic linker's lock
// forever (blocked in a dl_iterate_phdr callback, or in a dlopen'd
// library's constructor) while the process ends. Untraced the program exits
// at once; traced it must too (the writer and the exit leak scan take no
// loader lock), with the block the blocked thread holds classified.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <tuple>

#include "leak_tools.hpp"

namespace memtrail::leaks {
namespace {

const std::string kMemtrail = MEMTRAIL_BIN;
const std::string kBinDir = LEAK_BIN_DIR;
// A hang is a failure, not a stuck test: far above the second it takes.
const std::string kTimeout = "timeout -s KILL 20 ";

using Param = std::tuple<std::string, std::string>;  // "O0" / "O2", "iterate" / "dlopen"

class LoaderLockHeld : public testing::TestWithParam<Param> {
 protected:
  std::string command() const {
    return "./leak_loader_lock_forever_" + std::get<0>(GetParam()) + " " + std::get<1>(GetParam());
  }
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST_P(LoaderLockHeld, ExitsUntraced) {
  auto start = std::chrono::steady_clock::now();
  CommandResult r = run_command("cd " + shell_quote(kBinDir) + " && " + kTimeout + command());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(seconds_since(start), 10.0);
}

TEST_P(LoaderLockHeld, ExitsTracedWithTheHeldBlockReachable) {
  TempDir traces("loader-lock");
  ASSERT_FALSE(traces.path().empty());
  const std::string run_dir = traces.path() + "/run";
  auto start = std::chrono::steady_clock::now();
  CommandResult r =
      run_command("cd " + shell_quote(kBinDir) + " && " + kTimeout + shell_quote(kMemtrail) +
                  " run -o " + shell_quote(run_dir) + " -- " + command());
  const double took = seconds_since(start);
  ASSERT_EQ(r.exit_code, 0) << "137: killed after 20 s; stderr: " << r.err;
  // The exit flushes wait up to 5 s and 2 s for a writer that cannot drain.
  EXPECT_LT(took, 5.0) << "the exit waited for something";
  CommandResult report = run_command(shell_quote(kMemtrail) +
                                     " report --json --top 0 --no-symbols " + shell_quote(run_dir));
  ASSERT_EQ(report.exit_code, 0) << report.err;
  nlohmann::json json = nlohmann::json::parse(report.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded());
  const auto& leaks = json["leaks"];
  EXPECT_EQ(amount_of(leaks, "direct"), (Amount{0, 0})) << leaks.dump();
  EXPECT_EQ(amount_of(leaks, "indirect"), (Amount{0, 0})) << leaks.dump();
  EXPECT_EQ(amount_of(leaks, "possible"), (Amount{0, 0})) << leaks.dump();
  // The blocked thread's block, and setenv's (environ and its string).
  EXPECT_GE(amount_of(leaks, "reachable").blocks, 1) << leaks.dump();
}

INSTANTIATE_TEST_SUITE_P(Programs, LoaderLockHeld,
                         testing::Combine(testing::Values("O0", "O2"),
                                          testing::Values("iterate", "dlopen")),
                         [](const testing::TestParamInfo<Param>& info) {
                           return std::get<1>(info.param) + "_" + std::get<0>(info.param);
                         });

}  // namespace
}  // namespace memtrail::leaks
