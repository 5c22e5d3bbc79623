// `memtrail report` and `report --json` (module+offset frames: no binary is
// needed) of the samples' traces and a churn trace, byte for byte against
// the output of main at f559c8d, before the analysis pass is shared by the
// CLI and the GUI (issue 30): that pass must not change one byte of either.
// The traces in tests/analyzer/golden/samples/ were recorded by `memtrail
// run` of samples/leaks, threads, fragmentation, workspaces, `tidy-loop
// forgot 20`, iteration-leak, `pool-vs-malloc 20`, dlopen_host and
// `bench/gui_churn 30000` (~60,000 events over 2 threads). A deliberate
// change of the output regenerates the files: MEMTRAIL_UPDATE_GOLDEN=1
// build/bin/test_analyzer --gtest_filter='*ReportGoldenSamples*', and the
// diff goes in the same commit.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "run_command.hpp"

namespace memtrail {
namespace {

using test::run_command;
using test::shell_quote;
using test::slurp;

const std::string kDir = std::string(MEMTRAIL_TEST_DIR) + "/golden/samples";

// "line N: got '...', want '...'" for the first line that differs.
std::string firstDifference(const std::string& got, const std::string& want) {
  std::istringstream g(got), w(want);
  std::string gl, wl;
  for (int n = 1;; ++n) {
    const bool more_g = static_cast<bool>(std::getline(g, gl));
    const bool more_w = static_cast<bool>(std::getline(w, wl));
    if (!more_g && !more_w) return "same lines, different line ends";
    if (gl != wl || more_g != more_w)
      return "line " + std::to_string(n) + ": got '" + gl.substr(0, 200) + "', want '" +
             wl.substr(0, 200) + "'";
  }
}

class ReportGoldenSamples : public ::testing::TestWithParam<const char*> {
 protected:
  void check(const std::string& flags, const std::string& suffix) {
    const std::string name = GetParam();
    // From the folder, so the path the report prints is the trace's name.
    auto r = run_command("cd " + shell_quote(kDir) + " && " MEMTRAIL_BIN " report " + flags +
                         " --no-symbols --no-symbol-cache " + name + ".mtr");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string golden = kDir + "/" + name + suffix;
    if (std::getenv("MEMTRAIL_UPDATE_GOLDEN")) {
      std::ofstream(golden, std::ios::binary) << r.out;
      return;
    }
    const std::string want = slurp(golden);
    ASSERT_FALSE(want.empty()) << "no golden file " << golden;
    EXPECT_TRUE(r.out == want) << golden << ": " << firstDifference(r.out, want);
  }
};

TEST_P(ReportGoldenSamples, TextIsMainsToTheByte) {
  check("", ".txt");
}

TEST_P(ReportGoldenSamples, JsonIsMainsToTheByte) {
  check("--json", ".json");
}

INSTANTIATE_TEST_SUITE_P(Traces, ReportGoldenSamples,
                         ::testing::Values("leaks", "threads", "fragmentation", "workspaces",
                                           "tidy-loop", "iteration-leak", "gui_churn",
                                           "pool-vs-malloc", "dlopen_host"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace memtrail
