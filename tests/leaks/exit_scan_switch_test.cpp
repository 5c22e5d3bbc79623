// MEMTRAIL_LEAK_SCAN=0 skips the exit-time leak scan (docs/tracing.md): the
// blocks live at exit are then unclassified; by default they are classified.
#include <gtest/gtest.h>

#include <string>

#include "leak_tools.hpp"

namespace memtrail::leaks {
namespace {

const std::string kMemtrail = MEMTRAIL_BIN;
const std::string kBinDir = LEAK_BIN_DIR;

nlohmann::json leaks_of_run(const std::string& env) {
  TempDir traces("scan-switch");
  const std::string run_dir = traces.path() + "/run";
  CommandResult r = run_command("cd " + shell_quote(kBinDir) + " && " + env + " timeout 60 " +
                                shell_quote(kMemtrail) + " run -o " + shell_quote(run_dir) +
                                " -- ./leak_threads64_O2");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  CommandResult report = run_command(shell_quote(kMemtrail) +
                                     " report --json --top 0 --no-symbols " + shell_quote(run_dir));
  EXPECT_EQ(report.exit_code, 0) << report.err;
  nlohmann::json json = nlohmann::json::parse(report.out, nullptr, false);
  return json.is_discarded() ? nlohmann::json() : json["leaks"];
}

TEST(ExitScanSwitch, OnByDefault) {
  nlohmann::json leaks = leaks_of_run("");
  EXPECT_TRUE(leaks.value("classified", false)) << leaks.dump();
  EXPECT_EQ(amount_of(leaks, "reachable"), (Amount{64, 4096}));
}

TEST(ExitScanSwitch, ZeroSkipsTheScan) {
  nlohmann::json leaks = leaks_of_run("MEMTRAIL_LEAK_SCAN=0");
  EXPECT_FALSE(leaks.value("classified", true)) << leaks.dump();
  EXPECT_EQ(amount_of(leaks, "reachable"), (Amount{0, 0}));
}

}  // namespace
}  // namespace memtrail::leaks
