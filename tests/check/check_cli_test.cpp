// `memtrail check` end to end: real programs traced by `memtrail run`,
// checked by the real CLI; exit codes, exact numbers, files.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "run_command.hpp"

namespace {

namespace fs = std::filesystem;

using memtrail::test::CommandResult;
// stdout and stderr together: the messages are checked wherever they go.
using memtrail::test::run_merged;

const std::string kMemtrail = MEMTRAIL_BIN;

class CheckCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("memtrail-check-test-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    ASSERT_EQ(run_merged(kMemtrail + " run -o " + path("leaks.mtr") + " -- " LEAKS_BIN).exit_code,
              0);
    ASSERT_EQ(run_merged(kMemtrail + " run -o " + path("base.mtr") + " -- " LEAKER_BIN).exit_code,
              0);
    ASSERT_EQ(run_merged(kMemtrail + " run -o " + path("extra.mtr") + " -- " LEAKER_BIN " extra")
                  .exit_code,
              0);
    ASSERT_EQ(
        run_merged(kMemtrail + " run -o " + path("peak.mtr") + " -- " LEAKER_BIN " peak 1000000")
            .exit_code,
        0);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static std::string path(const std::string& name) { return (dir_ / name).string(); }
  static void write(const std::string& name, const std::string& text) {
    std::ofstream(path(name)) << text;
  }
  static CommandResult check(const std::string& args) {
    return run_merged(kMemtrail + " check " + args);
  }
  static fs::path dir_;
};
fs::path CheckCli::dir_;

// samples/leaks/README.md: 8797 bytes in 13 direct blocks + 288 in 9 indirect.
TEST_F(CheckCli, FailsWithTheExactLeakedNumbersAndSites) {
  CommandResult r = check(path("leaks.mtr"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(
      r.out.find("FAIL leaked-bytes: leaked 9085 bytes (8.87 KiB) in 22 blocks; limit 0 bytes"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Direct leak of 5000 bytes (4.88 KiB) in 1 block allocated from:"),
            std::string::npos);
  EXPECT_NE(r.out.find("leak_realloc_chain() at "), std::string::npos);
  EXPECT_NE(r.out.find("leaks.cpp:"), std::string::npos);
  // Direct leaks are listed before indirect ones (as LSan and Valgrind): the
  // 12 direct sites fill the default 5, the indirect one needs a larger --top.
  EXPECT_EQ(r.out.find("Indirect leak of 288 bytes in 9 blocks"), std::string::npos) << r.out;
  r = check(path("leaks.mtr") + " --top 20");
  ASSERT_NE(r.out.find("Indirect leak of 288 bytes in 9 blocks"), std::string::npos) << r.out;
  EXPECT_LT(r.out.rfind("Direct leak of "), r.out.find("Indirect leak of 288 bytes in 9 blocks"))
      << r.out;
}

TEST_F(CheckCli, LimitsAtAndBelowTheMeasuredValue) {
  EXPECT_EQ(check(path("leaks.mtr") + " --max-leaked 9085").exit_code, 0);
  EXPECT_EQ(check(path("leaks.mtr") + " --max-leaked 9084").exit_code, 1);
  EXPECT_EQ(check(path("leaks.mtr") + " --max-leaked-blocks 22").exit_code, 0);
  CommandResult r = check(path("leaks.mtr") + " --max-leaked-blocks 21");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("leaked 22 blocks (9085 bytes (8.87 KiB)); limit 21 blocks"),
            std::string::npos)
      << r.out;
}

TEST_F(CheckCli, PeakLimitNamesTheMeasuredPeakAndItsSite) {
  CommandResult r = check(path("peak.mtr") + " --max-leaked 100 --max-peak 500KiB");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("FAIL peak-used: peak used"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("limit 512000 bytes (500.00 KiB)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1000000 bytes (976.56 KiB) live at the peak"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("hold("), std::string::npos) << r.out;
  EXPECT_EQ(check(path("peak.mtr") + " --max-leaked 100 --max-peak 2MiB").exit_code, 0);
  // Per pool: one verdict per named pool.
  CommandResult pool =
      check(path("peak.mtr") + " --max-leaked 100 --pool malloc --max-peak 500KiB");
  EXPECT_EQ(pool.exit_code, 1);
  EXPECT_NE(pool.out.find("FAIL peak-used[malloc]: pool 'malloc' peak used"), std::string::npos)
      << pool.out;
}

TEST_F(CheckCli, SuppressionsMakeItPassAndAreCounted) {
  write("leaks.supp",
        "# every deliberate leak of samples/leaks\n"
        "leak:leak_*\n"
        "leak:*thread_leaker*\n");
  CommandResult r = check(path("leaks.mtr") + " --suppressions " + path("leaks.supp"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("leaked 0 bytes in 0 blocks; limit 0 bytes; 9085 bytes (8.87 KiB) in 22 "
                       "blocks suppressed"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Suppressions used:"), std::string::npos);
  EXPECT_NE(r.out.find("      1       2048 leak:*thread_leaker* (" + path("leaks.supp") + ":3)"),
            std::string::npos)
      << r.out;
  // Matching by file name and by module works too; a partial one still fails.
  write("file.supp", "leak:leaks.cpp\n");
  EXPECT_EQ(check(path("leaks.mtr") + " --suppressions " + path("file.supp")).exit_code, 0);
  write("partial.supp", "leak:leak_calloc\n");
  CommandResult p = check(path("leaks.mtr") + " --suppressions " + path("partial.supp"));
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_NE(p.out.find("leaked 8445 bytes (8.25 KiB) in 21 blocks"), std::string::npos) << p.out;
}

TEST_F(CheckCli, BadSuppressionsAreUsageErrors) {
  write("bad.supp", "leak:ok\nrace:foo\n");
  CommandResult r = check(path("leaks.mtr") + " --suppressions " + path("bad.supp"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("bad.supp:2: unknown suppression type 'race'"), std::string::npos) << r.out;
}

TEST_F(CheckCli, BaselineRoundTripPassesAndNewSiteFails) {
  CommandResult w =
      check(path("base.mtr") + " --max-leaked 1MiB --write-baseline " + path("base.json"));
  ASSERT_EQ(w.exit_code, 0) << w.out;
  EXPECT_EQ(check(path("base.mtr") + " --baseline " + path("base.json")).exit_code, 0);
  // The same program with one more leak site: fails even with a huge tolerance.
  CommandResult r =
      check(path("extra.mtr") + " --baseline " + path("base.json") + " --tolerance 1000");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("FAIL baseline-leak-sites: 2 leak sites, 1 new and 0 grown"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("New leak site: 64 bytes in 1 block"), std::string::npos);
  EXPECT_NE(r.out.find("extra_leak()"), std::string::npos);
  // A higher peak fails without tolerance and passes within it.
  CommandResult peak = check(path("peak.mtr") + " --baseline " + path("base.json"));
  EXPECT_EQ(peak.exit_code, 1) << peak.out;
  EXPECT_NE(peak.out.find("FAIL baseline-peak-used:"), std::string::npos) << peak.out;
}

TEST_F(CheckCli, JUnitHasOneTestcasePerLimit) {
  std::string xml = path("junit.xml");
  CommandResult r =
      check(path("leaks.mtr") +
            " --max-leaked 1KiB --max-peak 1MiB --max-leaked-blocks 100 --junit " + xml);
  EXPECT_EQ(r.exit_code, 1);
  CommandResult py = run_merged(
      "python3 -c \"import sys, xml.etree.ElementTree as E\n"
      "r = E.parse(sys.argv[1]).getroot()\n"
      "s = r.find('testsuite')\n"
      "cases = s.findall('testcase')\n"
      "failed = [c.get('name') for c in cases if c.find('failure') is not None]\n"
      "print(r.tag, r.get('tests'), r.get('failures'), s.get('tests'), s.get('failures'), "
      "len(cases), failed)\n"
      "print(cases[0].find('failure').get('message'))\" " +
      xml);
  ASSERT_EQ(py.exit_code, 0) << py.out;
  EXPECT_EQ(py.out,
            "testsuites 3 1 3 1 3 ['leaked-bytes']\n"
            "leaked 9085 bytes (8.87 KiB) in 22 blocks; limit 1024 bytes (1.00 KiB)\n");
}

TEST_F(CheckCli, PolicyHoldsLimitsAndFlagsOverrideIt) {
  write("policy.json",
        R"({"max_leaked": "9 KiB", "max_peak": 1048576, "suppressions": ["leak:leak_strdup"],
            "default_suppressions": true})");
  CommandResult r = check(path("leaks.mtr") + " --policy " + path("policy.json"));
  EXPECT_EQ(r.exit_code, 0) << r.out;  // 9085 - 21 suppressed = 9064 <= 9216
  EXPECT_NE(r.out.find("leaked 9064 bytes"), std::string::npos) << r.out;
  EXPECT_EQ(check(path("leaks.mtr") + " --policy " + path("policy.json") + " --max-leaked 9063")
                .exit_code,
            1);
  write("typo.json", R"({"max_leak": "1 KiB"})");
  CommandResult t = check(path("leaks.mtr") + " --policy " + path("typo.json"));
  EXPECT_EQ(t.exit_code, 2);
  EXPECT_NE(t.out.find("unknown key 'max_leak'"), std::string::npos) << t.out;
  write("type.json", R"({"max_peak": true})");
  EXPECT_EQ(check(path("leaks.mtr") + " --policy " + path("type.json")).exit_code, 2);
}

TEST_F(CheckCli, BadInputIsExit2WithOneLine) {
  write("garbage.mtr", "this is not a trace");
  CommandResult r = check(path("garbage.mtr"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_EQ(check(path("missing.mtr")).exit_code, 2);
  CommandResult size = check(path("leaks.mtr") + " --max-leaked 12parsecs");
  EXPECT_EQ(size.exit_code, 2);
  EXPECT_NE(size.out.find("--max-leaked"), std::string::npos) << size.out;
  EXPECT_EQ(check(path("leaks.mtr") + " --frobnicate").exit_code, 2);
  CommandResult pool = check(path("leaks.mtr") + " --pool mallocc --max-peak 1MiB");
  EXPECT_EQ(pool.exit_code, 2);
  EXPECT_NE(pool.out.find("pool 'mallocc' is not in the trace"), std::string::npos) << pool.out;
  EXPECT_EQ(check("").exit_code, 2);
  EXPECT_EQ(check(path("leaks.mtr") + " --tolerance 5").exit_code, 2);
}

TEST_F(CheckCli, RunModeTracesThenChecks) {
  CommandResult r = check("--max-leaked 100 --run -- " LEAKER_BIN " extra");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("leaked 164 bytes in 2 blocks; limit 100 bytes"), std::string::npos)
      << r.out;
  EXPECT_EQ(check("--max-leaked 164 --run -- " LEAKER_BIN " extra").exit_code, 0);
  CommandResult fails = check("--run -- /bin/false");
  EXPECT_EQ(fails.exit_code, 1);
  EXPECT_NE(fails.out.find("'/bin/false' exited with status 1"), std::string::npos) << fails.out;
}

// A temporary trace goes with its symbol cache and is never named; a kept
// one is named once, by its path.
TEST_F(CheckCli, RunModeNamesOnlyAKeptTraceAndLeavesNothingInTmpdir) {
  const std::string tmp = path("tmpdir");
  fs::create_directories(tmp);
  CommandResult r = run_merged("TMPDIR=" + tmp + " " + kMemtrail +
                               " check --max-leaked 1000 --run -- " LEAKER_BIN);
  // A passing check symbolizes its sites too (and wrote the cache before).
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("memtrail check: passed"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("trace written"), std::string::npos) << r.out;
  std::string left;
  for (const auto& entry : fs::directory_iterator(tmp))
    left += " " + entry.path().filename().string();
  EXPECT_EQ(left, "") << "left in TMPDIR";

  CommandResult kept =
      check("--max-leaked 1000 --run --trace " + path("kept.mtr") + " -- " LEAKER_BIN);
  EXPECT_EQ(kept.exit_code, 0) << kept.out;
  EXPECT_NE(kept.out.find("memtrail: trace written to " + path("kept.mtr") + "\n"),
            std::string::npos)
      << kept.out;
  EXPECT_EQ(kept.out.find("trace written"), kept.out.rfind("trace written")) << kept.out;
  EXPECT_TRUE(fs::exists(path("kept.mtr")));
}

}  // namespace
