// MEMTRAIL_LEAK_SCAN=0 skips the exit-time leak scan (docs/tracing.md): the
// blocks live at exit are then unclassified; by default they are classified.
// MEMTRAIL_SCAN_DEBUG=1 names where each possibly-lost block's pointer lay.
#include <gtest/gtest.h>

#include <regex>
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

// The stderr of interior.c traced, with `env` before memtrail.
std::string stderr_of_interior(const std::string& env) {
  TempDir traces("scan-debug");
  CommandResult r = run_command("cd " + shell_quote(kBinDir) + " && " + env + " timeout 60 " +
                                shell_quote(kMemtrail) + " run -q -o " +
                                shell_quote(traces.path() + "/run") + " -- ./leak_interior_O0");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.err;
}

// interior.c's 256 B block is possibly lost through g_middle, in the
// program's .data: one line says so, with the pointer 64 bytes into it.
TEST(ScanDebug, NamesWhereThePossiblePointerLay) {
  std::string err = stderr_of_interior("MEMTRAIL_SCAN_DEBUG=1");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      err, m,
      std::regex(
          R"(memtrail: scan debug: block (0x[0-9a-f]+) \(256 B\) possibly lost: )"
          R"(pointer (0x[0-9a-f]+) at 0x[0-9a-f]+ in module data \[.*leak_interior_O0\]\n)")))
      << err;
  EXPECT_EQ(std::stoull(m[2].str(), nullptr, 16) - std::stoull(m[1].str(), nullptr, 16), 64u);
  EXPECT_EQ(err.find("unknown environment variable"), std::string::npos) << err;
  std::size_t lines = 0;
  for (std::size_t at = 0; (at = err.find("scan debug", at)) != std::string::npos; ++at) ++lines;
  EXPECT_EQ(lines, 1u) << err;
}

TEST(ScanDebug, SilentByDefault) {
  EXPECT_EQ(stderr_of_interior("").find("scan debug"), std::string::npos);
  EXPECT_EQ(stderr_of_interior("MEMTRAIL_SCAN_DEBUG=0").find("scan debug"), std::string::npos);
}

// The scan off and its debug report asked for: no scan, no report, and no
// "unknown environment variable" warning for a variable memtrail knows.
TEST(ScanDebug, KnownWhenTheScanIsOff) {
  std::string err = stderr_of_interior("MEMTRAIL_LEAK_SCAN=0 MEMTRAIL_SCAN_DEBUG=1");
  EXPECT_EQ(err.find("unknown environment variable"), std::string::npos) << err;
  EXPECT_EQ(err.find("scan debug"), std::string::npos) << err;
}

}  // namespace
}  // namespace memtrail::leaks
