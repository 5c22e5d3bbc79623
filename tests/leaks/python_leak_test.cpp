// Issue 27 item 8 / issue 29 item 3: a plain CPython script (pymalloc on,
// no PYTHONMALLOC=malloc) leaks nothing, as Valgrind says: pymalloc's arenas
// are the program's anonymous mappings, which the exit scan takes as roots
// (tracer/preload/program_mappings.hpp). Five scripts (json, re, threading,
// ctypes, the _sqlite3 and zlib extension modules), five memtrail runs each;
// Valgrind is run beside when installed (slow on Python: the scripts stay
// tiny).
#include <gtest/gtest.h>

#include <string>

#include "leak_tools.hpp"

namespace memtrail::leaks {
namespace {

const std::string kMemtrail = MEMTRAIL_BIN;
const std::string kPython = "/usr/bin/python3";
constexpr int kRuns = 5;

struct Script {
  const char* name;
  const char* code;
};

const Script kScripts[] = {
    {"json", "import json; d = json.loads(json.dumps([dict(a=i, b=str(i)) for i in range(500)]))"},
    {"re",
     "import re; p = re.compile(r'(\\w+)@(\\w+)'); m = [p.findall('a@b c@d ' * 50) for _ in "
     "range(100)]"},
    {"threading",
     "import threading; r = []; ts = [threading.Thread(target=lambda: r.append(list(range(100)))) "
     "for _ in range(4)]; [t.start() for t in ts]; [t.join() for t in ts]"},
    {"ctypes",
     "import ctypes; b = ctypes.create_string_buffer(1000); n = "
     "ctypes.CDLL(None).strlen(b); a = (ctypes.c_int * 100)()"},
    {"sqlite3_zlib",
     "import sqlite3, zlib; c = sqlite3.connect(':memory:'); c.execute('create table t(x)'); "
     "c.executemany('insert into t values (?)', [(i,) for i in range(100)]); z = "
     "zlib.compress(b'x' * 10000)"},
};

class PythonLeaks : public testing::TestWithParam<std::size_t> {
 protected:
  const Script& script() const { return kScripts[GetParam()]; }
  std::string command() const { return shell_quote(kPython) + " -c " + shell_quote(script().code); }
  void SetUp() override {
    if (!installed(kPython)) GTEST_SKIP() << kPython << " is not installed";
  }
};

TEST_P(PythonLeaks, MemtrailFindsNothingLostLikeValgrind) {
  TempDir traces("py-trace");
  ASSERT_FALSE(traces.path().empty());
  const std::string run_dir = traces.path() + "/run";
  for (int i = 0; i < kRuns; ++i) {
    SCOPED_TRACE("run " + std::to_string(i + 1) + " of " + script().name);
    CommandResult run = run_command("env -u PYTHONMALLOC " + shell_quote(kMemtrail) + " run -o " +
                                    shell_quote(run_dir) + " -- " + command());
    ASSERT_EQ(run.exit_code, 0) << run.err;
    CommandResult report = run_command(
        shell_quote(kMemtrail) + " report --json --top 0 --no-symbols " + shell_quote(run_dir));
    ASSERT_EQ(report.exit_code, 0) << report.err;
    auto json = nlohmann::json::parse(report.out, nullptr, false);
    ASSERT_TRUE(json.contains("leaks")) << report.out;
    const auto& leaks = json["leaks"];
    EXPECT_EQ(amount_of(leaks, "direct"), Amount{}) << leaks.dump();
    EXPECT_EQ(amount_of(leaks, "indirect"), Amount{}) << leaks.dump();
    EXPECT_EQ(amount_of(leaks, "possible"), Amount{}) << leaks.dump();
    EXPECT_GT(amount_of(leaks, "reachable").blocks, 0) << "the scan ran: " << leaks.dump();
    run_command("rm -rf " + shell_quote(run_dir));
  }
}

TEST_P(PythonLeaks, ValgrindFindsNothingLost) {
  if (!installed("valgrind")) GTEST_SKIP() << "valgrind is not installed";
  CommandResult r =
      run_command("env -u PYTHONMALLOC valgrind --vgdb=no --leak-check=full " + command());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  if (test::contains(r.err, "All heap blocks were freed")) return;
  for (const char* cls : {"definitely lost", "indirectly lost", "possibly lost"})
    EXPECT_EQ(valgrind_amount(r.err, cls), (Amount{0, 0})) << cls << "\n" << r.err;
}

std::string case_name(const testing::TestParamInfo<std::size_t>& info) {
  return kScripts[info.param].name;
}

INSTANTIATE_TEST_SUITE_P(Scripts, PythonLeaks, testing::Range<std::size_t>(0, std::size(kScripts)),
                         case_name);

}  // namespace
}  // namespace memtrail::leaks
