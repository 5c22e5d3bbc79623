// Issue 27 item 8 / issue 29: the exit classes of plain CPython scripts
// (pymalloc on, no PYTHONMALLOC=malloc) equal Valgrind's, run by run:
// pymalloc's arenas are the program's anonymous mappings, which the exit
// scan takes as roots (tracer/preload/program_mappings.hpp). Six scripts
// (json, re, threading, ctypes, the _sqlite3 and zlib extension modules,
// and one that loses libc blocks through ctypes), five runs each under
// memtrail and, when it is installed, five under Valgrind; each memtrail
// run's definite, indirect and possible classes must equal the Valgrind
// run's (and the classes Valgrind gave when the table below was written,
// which is what memtrail is held to where Valgrind is missing).
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "leak_tools.hpp"

namespace memtrail::leaks {
namespace {

const std::string kMemtrail = MEMTRAIL_BIN;
const std::string kPython = "/usr/bin/python3";
constexpr int kRuns = 5;

// Valgrind's "definitely lost", "indirectly lost", "possibly lost";
// memtrail's direct, indirect, possible.
struct LostClasses {
  Amount definite, indirect, possible;
  bool operator==(const LostClasses&) const = default;
};

std::ostream& operator<<(std::ostream& os, const LostClasses& c) {
  return os << "definite " << c.definite << ", indirect " << c.indirect << ", possible "
            << c.possible;
}

struct Script {
  const char* name;
  const char* code;
  LostClasses lost;  // Valgrind's answer (valgrind-3.19, Debian 12's python3.11)
};

const Script kScripts[] = {
    {"json",
     "import json; d = json.loads(json.dumps([dict(a=i, b=str(i)) for i in range(500)]))",
     {}},
    {"re",
     "import re; p = re.compile(r'(\\w+)@(\\w+)'); m = [p.findall('a@b c@d ' * 50) for _ in "
     "range(100)]",
     {}},
    {"threading",
     "import threading; r = []; ts = [threading.Thread(target=lambda: r.append(list(range(100)))) "
     "for _ in range(4)]; [t.start() for t in ts]; [t.join() for t in ts]",
     {}},
    {"ctypes",
     "import ctypes; b = ctypes.create_string_buffer(1000); n = "
     "ctypes.CDLL(None).strlen(b); a = (ctypes.c_int * 100)()",
     {}},
    {"sqlite3_zlib",
     "import sqlite3, zlib; c = sqlite3.connect(':memory:'); c.execute('create table t(x)'); "
     "c.executemany('insert into t values (?)', [(i,) for i in range(100)]); z = "
     "zlib.compress(b'x' * 10000)",
     {}},
    // Three 12,345-byte blocks from libc's malloc whose addresses only ever
    // lived in Python ints (30-bit digits, no pointer a scan can see): lost.
    {"ctypes_lost",
     "import ctypes\n"
     "libc = ctypes.CDLL(None)\n"
     "libc.malloc.restype = ctypes.c_void_p\n"
     "libc.malloc.argtypes = [ctypes.c_size_t]\n"
     "for _ in range(3):\n"
     "    libc.malloc(12345)\n",
     {{3, 37035}, {}, {}}},
};

class PythonLeaks : public testing::TestWithParam<std::size_t> {
 protected:
  const Script& script() const { return kScripts[GetParam()]; }
  std::string command() const { return shell_quote(kPython) + " -c " + shell_quote(script().code); }
  void SetUp() override {
    if (!installed(kPython)) GTEST_SKIP() << kPython << " is not installed";
  }
};

LostClasses memtrail_classes(const std::string& run_dir, const std::string& command) {
  CommandResult run = run_command("env -u PYTHONMALLOC " + shell_quote(kMemtrail) + " run -o " +
                                  shell_quote(run_dir) + " -- " + command);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  CommandResult report = run_command(shell_quote(kMemtrail) +
                                     " report --json --top 0 --no-symbols " + shell_quote(run_dir));
  EXPECT_EQ(report.exit_code, 0) << report.err;
  run_command("rm -rf " + shell_quote(run_dir));
  auto json = nlohmann::json::parse(report.out, nullptr, false);
  if (json.is_discarded() || !json.contains("leaks")) {
    ADD_FAILURE() << "no report: " << report.out;
    return {{-1, -1}, {-1, -1}, {-1, -1}};
  }
  const auto& leaks = json["leaks"];
  EXPECT_GT(amount_of(leaks, "reachable").blocks, 0) << "the scan ran: " << leaks.dump();
  return {amount_of(leaks, "direct"), amount_of(leaks, "indirect"), amount_of(leaks, "possible")};
}

LostClasses valgrind_classes(const std::string& command) {
  CommandResult r =
      run_command("env -u PYTHONMALLOC valgrind --vgdb=no --leak-check=full " + command);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (test::contains(r.err, "All heap blocks were freed")) return {};
  return {valgrind_amount(r.err, "definitely lost"), valgrind_amount(r.err, "indirectly lost"),
          valgrind_amount(r.err, "possibly lost")};
}

TEST_P(PythonLeaks, ExitClassesEqualValgrindsInFiveRuns) {
  TempDir traces("py-trace");
  ASSERT_FALSE(traces.path().empty());
  const bool valgrind = installed("valgrind");
  if (!valgrind)
    std::cout << "valgrind is not installed: each run is compared with the classes Valgrind "
                 "gave when the script table was written\n";
  for (int i = 0; i < kRuns; ++i) {
    SCOPED_TRACE("run " + std::to_string(i + 1) + " of " + script().name);
    LostClasses ours = memtrail_classes(traces.path() + "/run", command());
    EXPECT_EQ(ours, script().lost);
    if (!valgrind) continue;
    LostClasses theirs = valgrind_classes(command());
    EXPECT_EQ(ours, theirs);
    EXPECT_EQ(theirs, script().lost) << "Valgrind's answer moved: the table is out of date";
  }
}

std::string case_name(const testing::TestParamInfo<std::size_t>& info) {
  return kScripts[info.param].name;
}

INSTANTIATE_TEST_SUITE_P(Scripts, PythonLeaks, testing::Range<std::size_t>(0, std::size(kScripts)),
                         case_name);

}  // namespace
}  // namespace memtrail::leaks
