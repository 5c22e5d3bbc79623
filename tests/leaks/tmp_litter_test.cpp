// The leak suite's runs leave nothing in /tmp: memtrail's traces and their
// symbol caches, Valgrind's and LeakSanitizer's runs and their builds all go
// into temporary directories that are removed. Runs alone (RUN_SERIAL), since
// other tests' temporaries would show up in the listing.
#include <gtest/gtest.h>

#include "leak_tools.hpp"

namespace memtrail::leaks {
namespace {

const std::string kMemtrail = MEMTRAIL_BIN;
const std::string kBinDir = LEAK_BIN_DIR;
const std::string kSrcDir = LEAK_SRC_DIR;

std::set<std::string> memtrail_names_in_tmp() {
  return names_in("/tmp", "memtrail");
}

// The commands of leak_suite_test, on the plugin program (a trace with
// symbols, so a symbol cache) and on a plain one.
void run_like_the_suite() {
  TempDir traces("leaks-trace");
  TempDir places("leaks-place");
  for (const char* program : {"leak_plugin_relative_O0", "leak_dead_frame_local_O2"}) {
    std::vector<RunPlace> where = run_places(places.path(), kBinDir, program);
    ASSERT_FALSE(where.empty()) << program;
    MemtrailRun r = memtrail_run(kMemtrail, where.back(), program, traces.path(), true);
    EXPECT_EQ(r.error, "") << program;
    if (installed("valgrind")) {
      EXPECT_EQ(valgrind_run(where.back(), program).run.exit_code, 0);
    }
  }
  if (lsan_works()) {
    TempDir dir("leaks-lsan");
    CommandResult build =
        run_command("clang -fsanitize=leak -g " + shell_quote(kSrcDir + "/dead_frame_local.c") +
                    " -o " + shell_quote(dir.path() + "/p"));
    EXPECT_EQ(build.exit_code, 0) << build.err;
    EXPECT_EQ(lsan_run(dir.path(), "p").run.exit_code, 23);
  }
}

TEST(LeakSuiteLitter, RunsLeaveNothingInTmp) {
  std::set<std::string> before = memtrail_names_in_tmp();
  run_like_the_suite();
  std::set<std::string> left;
  for (const auto& name : memtrail_names_in_tmp())
    if (!before.count(name)) left.insert(name);
  std::string names;
  for (const auto& name : left) names += " " + name;
  EXPECT_TRUE(left.empty()) << "left in /tmp:" << names;
}

}  // namespace
}  // namespace memtrail::leaks
