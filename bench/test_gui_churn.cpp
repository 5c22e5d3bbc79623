// The GUI benchmark's workload keeps its promises, traced with the real
// preload tracer: PATHS gives that many distinct stacks (the compiler must
// not fold the two call sites of each level into one), no PATHS gives the
// ~20 of the anchor, and bad arguments get one usage line and exit 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "memtrail/analysis.hpp"
#include "run_command.hpp"
#include "temp_dir.hpp"

namespace memtrail {
namespace {

using test::run_command;
using test::shell_quote;
using test::TempDir;

// Distinct call sites of `gui_churn ARGS` under `memtrail run`.
std::size_t traced_sites(const std::string& args) {
  TempDir dir("gui-churn");
  auto run = run_command(std::string(MEMTRAIL_BIN) + " run -q -o " + shell_quote(dir / "run") +
                         " -- " + GUI_CHURN_BIN + " " + args);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  std::string trace;
  for (const auto& e : std::filesystem::directory_iterator(dir / "run"))
    if (e.path().extension() == ".mtr") trace = e.path();
  AnalysisOptions options;
  options.symbolize = false;
  Analysis a = analyze(trace, options);
  EXPECT_TRUE(a.error.empty()) << a.error;
  return a.sites.size();
}

TEST(GuiChurn, PathsGiveThatManyDistinctStacks) {
  // 20000 draws over 5000 paths hit 5000 * (1 - e^-4) = 4908 of them on
  // average; a few more sites are the leak and the runtime's own.
  std::size_t sites = traced_sites("20000 5000");
  EXPECT_GE(sites, 4800u);
  EXPECT_LE(sites, 5020u);
}

TEST(GuiChurn, WithoutPathsAboutTwentyStacks) {
  std::size_t sites = traced_sites("20000");
  EXPECT_GE(sites, 19u);  // depths 2..20
  EXPECT_LE(sites, 40u);
}

TEST(GuiChurn, BadArgumentsGetUsageAndExit2) {
  for (const char* args : {"", "x", "10 -1", "10 131073", "1 2 3", "12abc"}) {
    auto r = run_command(std::string(GUI_CHURN_BIN) + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err_lines(), 1) << args;
    EXPECT_NE(r.err.find("usage: gui_churn"), std::string::npos) << args;
  }
}

}  // namespace
}  // namespace memtrail
