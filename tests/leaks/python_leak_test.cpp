// Issue 27 item 8 / issue 29: the exit classes of plain CPython scripts
// (pymalloc on) equal Valgrind's in every run: pymalloc's arenas are the
// program's anonymous mappings, which the exit scan takes as roots
// (tracer/preload/program_mappings.hpp), and the integers CPython keeps
// there (bytecode, bytes, str, int and float data, pymalloc's free blocks)
// are no pointers (python_data_words.hpp). Each script runs as an
// executable file (#!/usr/bin/python3) from two directories of different
// path lengths, with two environment sizes, as the C leak suite's programs
// do (leak_tools.hpp: the heap and the stacks move with both): 10 memtrail
// runs over the four places must give the table's classes; and, where
// Valgrind is installed, Valgrind's live answer at the shortest and the
// longest place must be the table's, and memtrail's run there must equal
// it but where the table says why memtrail departs.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "leak_tools.hpp"

namespace memtrail::leaks {
namespace {

const std::string kMemtrail = MEMTRAIL_BIN;
const std::string kPython = "/usr/bin/python3";
constexpr int kRuns = 10;

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

LostClasses lost_of(const MemtrailCounts& c) {
  return {c.direct, c.indirect, c.possible};
}

LostClasses lost_of(const ValgrindCounts& c) {
  return {c.definite, c.indirect, c.possible};
}

// Where memtrail keeps its own answer, and why.
struct Departure {
  LostClasses memtrail;
  const char* why;
};

struct Script {
  const char* name;
  const char* code;
  LostClasses valgrind;  // Valgrind's answer (valgrind-3.19, Debian 12's python3.11)
  std::optional<Departure> departs = std::nullopt;
  LostClasses memtrail() const { return departs ? departs->memtrail : valgrind; }
};

// A 100,000-byte block from libc's malloc that is lost but for an address
// inside it that the script keeps as data, in the objects `keep` makes.
#define MEMTRAIL_DATA_WORD_SCRIPT(keep)        \
  "import ctypes, struct\n"                    \
  "libc = ctypes.CDLL(None)\n"                 \
  "libc.malloc.restype = ctypes.c_void_p\n"    \
  "libc.malloc.argtypes = [ctypes.c_size_t]\n" \
  "word = struct.pack('<Q', libc.malloc(100000) + 12345)\n" keep

constexpr const char* kDataIsNoPointer =
    "the address lies in a Python object that holds no references (bytes, str, float, "
    "bytecode) or in a block pymalloc has back: data, not a pointer (python_data_words.hpp); "
    "Valgrind scans it as a pointer and says possibly lost, LSan says reachable";

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
    // lived in Python ints: lost. python3.11's bytecode covered one of them
    // (read "possibly lost") in about 1 run of 750 before the data rule.
    {"ctypes_lost",
     "import ctypes\n"
     "libc = ctypes.CDLL(None)\n"
     "libc.malloc.restype = ctypes.c_void_p\n"
     "libc.malloc.argtypes = [ctypes.c_size_t]\n"
     "for _ in range(3):\n"
     "    libc.malloc(12345)\n",
     {{3, 37035}, {}, {}}},
    // Issue 27: ten 840-byte blocks from libc's malloc, the first where a
    // 100-tuple lay (malloc reuses its chunk), whose address (16 bytes into
    // its block: a GC object's) six-item lists' item arrays kept; 200 short
    // bytes objects reuse those 48-byte pymalloc blocks, and their last 8
    // bytes, past their data, still hold it (a leaked reference keeps them
    // to the exit scan). The leak was possibly lost through those bytes.
    {"slack_word",
     "import ctypes\n"
     "libc = ctypes.CDLL(None)\n"
     "libc.malloc.restype = None\n"
     "libc.malloc.argtypes = [ctypes.c_size_t]\n"
     "big = tuple(range(100))\n"
     "lists = [[0, 1, 2, 3, 4, big] for _ in range(200)]\n"
     "del lists\n"
     "kept = [bytes((i % 256, i // 256)) for i in range(200)]\n"
     "ctypes.pythonapi.Py_IncRef(ctypes.py_object(kept))\n"
     "del big\n"
     "for _ in range(10):\n"
     "    libc.malloc(16 + 24 + 8 * 100)\n",
     {{10, 8400}, {}, {}}},
    // The address inside the lost block kept in a small bytes object, a str,
    // a float and a code object's bytecode (pymalloc's) and in a 8,000-byte
    // bytes object (a malloc'd block).
    {"data_word",
     MEMTRAIL_DATA_WORD_SCRIPT(
         "kept = [word, word.decode('latin-1'), struct.unpack('<d', word)[0],\n"
         "        compile('pass', 'w', 'exec').replace(co_code=word), word * 1000]\n"),
     {{}, {}, {1, 100000}},
     Departure{{{1, 100000}, {}, {}}, kDataIsNoPointer}},
    // The address inside the lost block left in a freed bytes object's block.
    {"freed_data_word",
     MEMTRAIL_DATA_WORD_SCRIPT("gone = word * 50\n"
                               "del gone, word\n"),
     {{}, {}, {1, 100000}},
     Departure{{{1, 100000}, {}, {}}, kDataIsNoPointer}},
};

// Four places for the script (leak_tools.hpp's run_places, for a script):
// an executable copy in a short and in a long directory, each with a plain
// environment and one 8 KiB larger; pymalloc on whatever the caller's
// PYTHONMALLOC says.
std::vector<RunPlace> script_places(const std::string& base, const std::string& file,
                                    const std::string& code) {
  const std::string dirs[2] = {base + "/s", base + "/" + std::string(90, 'd')};
  const std::string pymalloc = "PYTHONMALLOC=pymalloc ";
  const std::string pad = "LEAK_SUITE_PAD=" + std::string(8192, 'e') + " ";
  std::vector<RunPlace> places;
  for (const std::string& dir : dirs) {
    if (run_command("mkdir -p " + shell_quote(dir)).exit_code != 0) return {};
    std::ofstream(dir + "/" + file) << "#!" << kPython << "\n" << code << "\n";
    if (run_command("chmod +x " + shell_quote(dir + "/" + file)).exit_code != 0) return {};
    const std::string size = dir.size() < base.size() + 10 ? "short path" : "long path";
    places.push_back({dir, pymalloc, size + ", plain environment"});
    places.push_back({dir, pymalloc + pad, size + ", environment + 8 KiB"});
  }
  return places;
}

class PythonLeaks : public testing::TestWithParam<std::size_t> {
 protected:
  const Script& script() const { return kScripts[GetParam()]; }
  std::string file() const { return std::string("leak_") + script().name + ".py"; }
  std::string departure() const {
    return script().departs
               ? std::string("memtrail departs from Valgrind here: ") + script().departs->why
               : std::string("memtrail follows Valgrind here");
  }
  void SetUp() override {
    if (!installed(kPython)) GTEST_SKIP() << kPython << " is not installed";
  }
};

TEST_P(PythonLeaks, MemtrailTenRunsFromFourPlacesGiveTheTablesClasses) {
  SCOPED_TRACE(departure());
  TempDir traces("py-trace"), places("py-place");
  ASSERT_FALSE(traces.path().empty());
  const std::vector<RunPlace> where = script_places(places.path(), file(), script().code);
  ASSERT_FALSE(where.empty());
  for (int i = 0; i < kRuns; ++i) {
    const RunPlace& place = where[i % where.size()];
    SCOPED_TRACE("run " + std::to_string(i + 1) + " of " + script().name + " (" + place.label +
                 ")");
    MemtrailRun r = memtrail_run(kMemtrail, place, file(), traces.path(), false);
    ASSERT_EQ(r.run.exit_code, 0) << r.run.err;
    ASSERT_EQ(r.error, "");
    EXPECT_GT(r.counts.reachable.blocks, 0) << "the scan ran";
    EXPECT_EQ(lost_of(r.counts), script().memtrail())
        << "memtrail run's stderr (the scan's possibly-lost blocks):\n"
        << r.run.err;
  }
}

TEST_P(PythonLeaks, ValgrindLiveGivesTheTableAndMemtrailItsAnswer) {
  if (!installed("valgrind")) GTEST_SKIP() << "valgrind is not installed";
  SCOPED_TRACE(departure());
  TempDir traces("py-trace"), places("py-place");
  const std::vector<RunPlace> where = script_places(places.path(), file(), script().code);
  ASSERT_FALSE(where.empty());
  // The shortest path with the smallest environment, the longest with the largest.
  for (const RunPlace* place : {&where.front(), &where.back()}) {
    SCOPED_TRACE(place->label);
    ValgrindRun theirs = valgrind_run(*place, file());
    ASSERT_EQ(theirs.run.exit_code, 0) << theirs.run.err;
    EXPECT_EQ(lost_of(theirs.counts), script().valgrind)
        << "Valgrind's answer moved: the table is out of date\n"
        << theirs.run.err;
    MemtrailRun ours = memtrail_run(kMemtrail, *place, file(), traces.path(), false);
    ASSERT_EQ(ours.error, "");
    const LostClasses expected =
        script().departs ? script().departs->memtrail : lost_of(theirs.counts);
    EXPECT_EQ(lost_of(ours.counts), expected) << ours.run.err;
  }
}

std::string case_name(const testing::TestParamInfo<std::size_t>& info) {
  return kScripts[info.param].name;
}

INSTANTIATE_TEST_SUITE_P(Scripts, PythonLeaks, testing::Range<std::size_t>(0, std::size(kScripts)),
                         case_name);

}  // namespace
}  // namespace memtrail::leaks
