// `memtrail check --gen-suppressions` and `--show-leak-kinds` end to end, on
// samples/leaks traced by the real `memtrail run` (8797 bytes in 13 direct
// blocks + 288 in 9 indirect, samples/leaks/README.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "run_command.hpp"

namespace {

namespace fs = std::filesystem;
using memtrail::test::CommandResult;
using memtrail::test::run_command;

const std::string kMemtrail = MEMTRAIL_BIN;

class CheckLeakKinds : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("memtrail-leak-kinds-test-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    ASSERT_EQ(run_command(kMemtrail + " run -o " + path("leaks.mtr") + " -- " LEAKS_BIN).exit_code,
              0);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static std::string path(const std::string& name) { return (dir_ / name).string(); }
  static fs::path dir_;
};
fs::path CheckLeakKinds::dir_;

int count_lines_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) n += line.rfind(prefix, 0) == 0 ? 1 : 0;
  return n;
}

// The printed rules, saved as a file, make the same check pass.
TEST_F(CheckLeakKinds, GeneratedSuppressionsMakeTheCheckPass) {
  CommandResult failed =
      run_command(kMemtrail + " check " + path("leaks.mtr") + " --gen-suppressions");
  ASSERT_EQ(failed.exit_code, 1) << failed.err;
  EXPECT_EQ(failed.out.rfind("# memtrail check --gen-suppressions", 0), 0u) << failed.out;
  // leaks.cpp's leaking functions, each named once, innermost non-allocator frame.
  EXPECT_NE(failed.out.find("leak_realloc_chain()$\n"), std::string::npos) << failed.out;
  EXPECT_EQ(failed.out.find("leak:^malloc$"), std::string::npos) << failed.out;
  // strdup's malloc is libc's: the rule names the program's caller.
  EXPECT_NE(failed.out.find("leak_strdup()$\n"), std::string::npos) << failed.out;
  EXPECT_EQ(failed.out.find("leak:^__strdup$"), std::string::npos) << failed.out;
  int rules = count_lines_starting(failed.out, "leak:^");
  EXPECT_GE(rules, 3) << failed.out;
  std::ofstream(path("generated.supp")) << failed.out;

  CommandResult passed = run_command(kMemtrail + " check " + path("leaks.mtr") +
                                     " --suppressions " + path("generated.supp"));
  EXPECT_EQ(passed.exit_code, 0) << passed.out << passed.err;
  EXPECT_NE(passed.out.find("PASS leaked-bytes: leaked 0 bytes in 0 blocks; limit 0 bytes; 9085 "
                            "bytes (8.87 KiB) in 22 blocks suppressed"),
            std::string::npos)
      << passed.out;
  // Nothing fails: nothing to generate.
  CommandResult again = run_command(kMemtrail + " check " + path("leaks.mtr") + " --suppressions " +
                                    path("generated.supp") + " --gen-suppressions");
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_EQ(count_lines_starting(again.out, "leak:"), 0) << again.out;
}

TEST_F(CheckLeakKinds, ShowLeakKindsChoosesTheCountedClasses) {
  CommandResult definite =
      run_command(kMemtrail + " check " + path("leaks.mtr") + " --show-leak-kinds definite");
  EXPECT_EQ(definite.exit_code, 1);
  EXPECT_NE(definite.err.find("leaked 8797 bytes (8.59 KiB) in 13 blocks"), std::string::npos)
      << definite.err;
  CommandResult indirect =
      run_command(kMemtrail + " check " + path("leaks.mtr") + " --show-leak-kinds indirect");
  EXPECT_NE(indirect.err.find("leaked 288 bytes in 9 blocks"), std::string::npos) << indirect.err;
  CommandResult none =
      run_command(kMemtrail + " check " + path("leaks.mtr") + " --show-leak-kinds none");
  EXPECT_EQ(none.exit_code, 0) << none.err;
}

TEST_F(CheckLeakKinds, BadLeakKindIsOneLineAndExit2) {
  for (const char* cmd : {" check ", " report "}) {
    CommandResult r =
        run_command(kMemtrail + cmd + path("leaks.mtr") + " --show-leak-kinds definite,lost");
    EXPECT_EQ(r.exit_code, 2) << cmd;
    EXPECT_EQ(count_lines_starting(r.err, ""), 1) << r.err;
    EXPECT_NE(r.err.find("'lost' is no leak kind"), std::string::npos) << r.err;
  }
}

// Text lists only the asked classes; JSON too when asked (all by default).
TEST_F(CheckLeakKinds, ReportListsTheAskedLeakKinds) {
  CommandResult text = run_command(kMemtrail + " report " + path("leaks.mtr") +
                                   " --top 0 --show-leak-kinds indirect");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out.find("  direct leak:"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  indirect leak:"), std::string::npos) << text.out;
  CommandResult json = run_command(kMemtrail + " report --json " + path("leaks.mtr") +
                                   " --top 0 --show-leak-kinds definite");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"kind\": \"direct\""), std::string::npos);
  EXPECT_EQ(json.out.find("\"kind\": \"indirect\""), std::string::npos);
  EXPECT_EQ(json.out.find("\"kind\": \"reachable\""), std::string::npos);
}

}  // namespace
