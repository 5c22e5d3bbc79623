// Issue 14's leak-exactness suite: every program of tests/leaks/programs,
// built at -O0 and -O2 (-g), must get Valgrind memcheck's leak classes from
// memtrail in each of 10 runs; Valgrind and LeakSanitizer are run too, when
// installed, to check that the expected numbers are theirs. Each program
// runs from two working directories of different path lengths, with two
// environment sizes (issue 27: heap and stack layout move with both).
#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <tuple>

#include "leak_programs.hpp"

namespace memtrail::leaks {
namespace {

const std::string kMemtrail = MEMTRAIL_BIN;
const std::string kBinDir = LEAK_BIN_DIR;  // leak_<name>_<opt> and the libraries
const std::string kSrcDir = LEAK_SRC_DIR;  // tests/leaks/programs
constexpr int kRuns = 10;

using Param = std::tuple<std::size_t, std::string>;  // program index, "O0" / "O2"

class LeakSuite : public testing::TestWithParam<Param> {
 protected:
  const LeakProgram& program() const { return leak_programs()[std::get<0>(GetParam())]; }
  const std::string& opt() const { return std::get<1>(GetParam()); }
  std::string binary() const { return std::string("leak_") + program().name + "_" + opt(); }
};

// The plugin's leak is named by function and file although the plugin was
// loaded by a relative path and unloaded before exit.
void expect_plugin_frame(const nlohmann::json& report) {
  bool named = false;
  for (const auto& site : report["leaks"].value("sites", nlohmann::json::array()))
    if (site.value("bytes", 0) == 321 && !site["stack"].empty()) {
      const auto& frame = site["stack"][0];
      named = frame.value("function", "").find("plugin_leak_321") != std::string::npos &&
              frame.value("file", "").find("plugin.c") != std::string::npos;
    }
  EXPECT_TRUE(named) << "the 321 B leak's first frame is not plugin_leak_321 at plugin.c: "
                     << report["leaks"].dump();
}

TEST_P(LeakSuite, MemtrailTenRunsGiveValgrindsClasses) {
  const MemtrailCounts expected = memtrail_expected(program());
  SCOPED_TRACE(program().memtrail_differs ? std::string("memtrail departs from Valgrind here: ") +
                                                program().memtrail_differs->why
                                          : std::string("memtrail follows Valgrind here"));
  TempDir traces("leaks-trace"), places("leaks-place");
  ASSERT_FALSE(traces.path().empty());
  const std::vector<RunPlace> where = run_places(places.path(), kBinDir, binary());
  ASSERT_FALSE(where.empty());
  for (int i = 0; i < kRuns; ++i) {
    // Every run moves the working directory's length or the environment's size.
    const RunPlace& place = where[i % where.size()];
    SCOPED_TRACE("run " + std::to_string(i + 1) + " of " + binary() + " (" + place.label + ")");
    bool symbols = i == 0 && std::string(program().name) == "plugin_relative";
    MemtrailRun r = memtrail_run(kMemtrail, place, binary(), traces.path(), symbols);
    ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.counts, expected) << "memtrail run's stderr (the scan's possibly-lost blocks):\n"
                                  << r.run.err;
    if (symbols) expect_plugin_frame(r.json);
  }
}

TEST_P(LeakSuite, ValgrindAgreesWithTheExpectedClasses) {
  if (!installed("valgrind")) GTEST_SKIP() << "valgrind is not installed";
  TempDir places("leaks-place");
  const std::vector<RunPlace> where = run_places(places.path(), kBinDir, binary());
  ASSERT_FALSE(where.empty());
  // The shortest path with the smallest environment, the longest with the largest.
  // Valgrind is not deterministic on a threaded program either (one run in
  // a full ctest read one of threads200's 200 leaks "possibly lost"): its
  // answer is the one most of three runs give. A first run that agrees
  // settles it; after one that does not, both of the next two must.
  const ValgrindCounts expected = program().expected + program().valgrind_runtime;
  for (const RunPlace* place : {&where.front(), &where.back()}) {
    SCOPED_TRACE(place->label);
    ValgrindRun first = valgrind_run(*place, binary());
    ASSERT_EQ(first.run.exit_code, 0) << first.run.err;
    if (first.counts == expected) continue;
    std::cout << "Valgrind's first run differs from the table, two more decide:\n" << first.run.err;
    for (int i = 0; i < 2; ++i) {
      ValgrindRun again = valgrind_run(*place, binary());
      ASSERT_EQ(again.run.exit_code, 0) << again.run.err;
      EXPECT_EQ(again.counts, expected) << again.run.err;
    }
  }
}

// LeakSanitizer: `clang -fsanitize=leak -g -O0/-O2` of the same source, run
// next to a copy of the plugin (plugin_loop looks beside its executable).
TEST_P(LeakSuite, LsanAgreesWithTheExpectedClasses) {
  if (!lsan_works()) GTEST_SKIP() << "clang -fsanitize=leak does not build and run a program";
  TempDir dir("leaks-lsan");
  ASSERT_FALSE(dir.path().empty());
  std::string source = kSrcDir + "/" + program().source;
  bool cxx = source.ends_with(".cpp");
  std::string libs = program().links_ctor_libs
                         ? " -L" + shell_quote(kBinDir) + " -lctorkeep -lctorleak -Wl,-rpath," +
                               shell_quote(kBinDir)
                         : "";
  CommandResult build =
      run_command(std::string(cxx ? "clang++ -std=c++20" : "clang") + " -fsanitize=leak -g -" +
                  opt() + " -I" + shell_quote(kSrcDir) + " " + shell_quote(source) + " -o " +
                  shell_quote(dir.path() + "/" + binary()) + " -pthread -ldl" + libs + " && cp " +
                  shell_quote(kBinDir + "/libleakplugin.so") + " " + shell_quote(dir.path()));
  ASSERT_EQ(build.exit_code, 0) << build.err;

  auto [expected, why] = lsan_expected(program(), opt());
  SCOPED_TRACE(why.empty() ? std::string("LSan and Valgrind agree here")
                           : "LSan disagrees with Valgrind here (" + why +
                                 "); memtrail's expected classes follow Valgrind");
  LsanRun r = lsan_run(dir.path(), binary());
  bool leaks = expected.direct.blocks + expected.indirect.blocks > 0;
  EXPECT_EQ(r.run.exit_code, leaks ? 23 : 0) << r.run.err;
  EXPECT_EQ(r.counts, expected) << r.run.err;
}

std::string case_name(const testing::TestParamInfo<Param>& info) {
  return std::string(leak_programs()[std::get<0>(info.param)].name) + "_" + std::get<1>(info.param);
}

INSTANTIATE_TEST_SUITE_P(Programs, LeakSuite,
                         testing::Combine(testing::Range<std::size_t>(0, leak_programs().size()),
                                          testing::Values("O0", "O2")),
                         case_name);

}  // namespace
}  // namespace memtrail::leaks
