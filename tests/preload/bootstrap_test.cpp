// The interposers' bootstrap, end to end under `memtrail run`:
//  - the program's own allocator (jemalloc, tcmalloc, mimalloc), linked or
//    preloaded, keeps serving it: same output and exit code as untraced,
//    exact allocation counts in the trace (issue 15, item 2);
//  - heap events before the tracer's constructor are recorded, with stacks
//    (issue 14, item 5);
//  - a plugin dlopen'ed by a relative path is symbolized (issue 14, item 3).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "memtrail/trace_file.hpp"
#include "run_command.hpp"
#include "run_dir.hpp"
#include "temp_dir.hpp"

namespace {

using memtrail::test::CommandResult;
using memtrail::test::only_trace;
using memtrail::test::run_command;
using memtrail::test::shell_quote;

const std::string kMemtrail = MEMTRAIL_BIN;

// Every test's directory is $TMPDIR/memtrail-bootstrap-test-XXXXXX.
struct TempDir : memtrail::test::TempDir {
  TempDir() : memtrail::test::TempDir("bootstrap") {}
};

// Allocations per size, and the sizes of the blocks live at exit.
struct Counts : memtrail::TraceVisitor {
  memtrail::ReadResult result;
  std::map<std::uint64_t, std::uint64_t> allocs, live_at_exit;
  std::map<memtrail::LeakClass, std::map<std::uint64_t, std::uint64_t>> classified;
  std::uint64_t samples = 0, heap_reserved_max = 0;        // mallinfo2 figures of the samples
  std::set<std::pair<std::uint32_t, std::uint64_t>> live;  // (pool, address)
  std::uint64_t unmatched_frees = 0;                       // frees of blocks not live
  void on_event(const memtrail::Event& e) override {
    if (e.kind == memtrail::EventKind::alloc) live.emplace(e.pool, e.address);
    if (e.kind == memtrail::EventKind::free && live.erase({e.pool, e.address}) == 0)
      ++unmatched_frees;
    if (e.kind == memtrail::EventKind::sample) {
      ++samples;
      heap_reserved_max = std::max<std::uint64_t>(heap_reserved_max, e.requested);
    }
    if (e.kind == memtrail::EventKind::alloc) ++allocs[e.size];
    if (e.kind == memtrail::EventKind::reachability) {
      ++live_at_exit[e.size];
      ++classified[static_cast<memtrail::LeakClass>(e.detail)][e.size];
    }
  }
};

Counts read_counts(const std::string& path) {
  Counts counts;
  memtrail::TraceReader reader(path);
  counts.result = reader.read(counts);
  return counts;
}

// `memtrail export --format json`: every site, its frames by id.
nlohmann::json export_json(const TempDir& dir, const std::string& trace) {
  CommandResult r = run_command(kMemtrail + " export " + shell_quote(trace) + " --format json -o " +
                                shell_quote(dir.file("export.json")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(memtrail::test::slurp(dir.file("export.json")));
}

// ---- the program's own allocator ---------------------------------------------

// Runs alloc_mix untraced and traced (same environment), compares, and checks
// the trace's counts. `preload` is prepended as LD_PRELOAD=... to both runs.
void expect_same_run_and_exact_counts(const std::string& program, const std::string& allocator,
                                      const std::string& preload) {
  TempDir dir;
  std::string env = preload.empty() ? "" : "LD_PRELOAD=" + shell_quote(preload) + " ";
  std::string args = shell_quote(program) + " " + allocator;
  CommandResult plain = run_command(env + args);
  ASSERT_EQ(plain.exit_code, 0) << plain.out << plain.err;
  std::string trace = dir.file("t.mtr");
  CommandResult traced =
      run_command(env + kMemtrail + " run -o " + shell_quote(trace) + " -- " + args);
  EXPECT_EQ(traced.exit_code, plain.exit_code) << traced.err;
  EXPECT_EQ(traced.out, plain.out);
  EXPECT_EQ(traced.err, "memtrail: trace written to " + trace + " (1 trace)\n");
  Counts t = read_counts(only_trace(trace));
  ASSERT_TRUE(t.result.ok) << t.result.error;
  std::map<std::uint64_t, std::uint64_t> expected{{1001, 1000}, {1002, 100}, {1003, 10},
                                                  {1004, 10},   {1005, 10},  {1088, 10},
                                                  {1007, 10},   {1008, 5},   {1009, 3}};
  if (allocator != "glibc") expected[1010] = 7;
  for (auto [size, n] : expected) EXPECT_EQ(t.allocs[size], n) << "size " << size;
  EXPECT_EQ(t.live_at_exit[1009], 3u);
  EXPECT_EQ(t.allocs[1011], 0u);  // the native API is not interposed
  // glibc's mallinfo2 says nothing about another allocator's heap.
  ASSERT_GE(t.samples, 1u);
  if (allocator == "glibc")
    EXPECT_GT(t.heap_reserved_max, 0u);
  else
    EXPECT_EQ(t.heap_reserved_max, 0u);
}

TEST(ProgramsAllocator, Glibc) {
  expect_same_run_and_exact_counts(ALLOC_MIX_BIN, "glibc", "");
}

// An allocator from Debian, as linked into alloc_mix and as a library to
// preload (paths empty when its -dev package was missing at configure time).
struct OtherAllocator {
  const char* name;
  const char* linked_program;
  const char* library;
  const char* package;
};
const OtherAllocator kJemalloc{"jemalloc", JEMALLOC_MIX_BIN, JEMALLOC_LIB, "libjemalloc-dev"};
const OtherAllocator kTcmalloc{"tcmalloc", TCMALLOC_MINIMAL_MIX_BIN, TCMALLOC_MINIMAL_LIB,
                               "libgoogle-perftools-dev"};
const OtherAllocator kMimalloc{"mimalloc", MIMALLOC_MIX_BIN, MIMALLOC_LIB, "libmimalloc-dev"};

#define SKIP_IF_MISSING(a)                           \
  if (std::string((a).library).empty())              \
  GTEST_SKIP() << (a).package << " is not installed" \
               << " (scripts/install-deps; then re-run cmake)"

TEST(ProgramsAllocator, JemallocLinked) {
  SKIP_IF_MISSING(kJemalloc);
  expect_same_run_and_exact_counts(kJemalloc.linked_program, kJemalloc.name, "");
}
TEST(ProgramsAllocator, JemallocPreloaded) {
  SKIP_IF_MISSING(kJemalloc);
  expect_same_run_and_exact_counts(ALLOC_MIX_BIN, kJemalloc.name, kJemalloc.library);
}
TEST(ProgramsAllocator, TcmallocLinked) {
  SKIP_IF_MISSING(kTcmalloc);
  expect_same_run_and_exact_counts(kTcmalloc.linked_program, kTcmalloc.name, "");
}
TEST(ProgramsAllocator, TcmallocPreloaded) {
  SKIP_IF_MISSING(kTcmalloc);
  expect_same_run_and_exact_counts(ALLOC_MIX_BIN, kTcmalloc.name, kTcmalloc.library);
}
TEST(ProgramsAllocator, MimallocLinked) {
  SKIP_IF_MISSING(kMimalloc);
  expect_same_run_and_exact_counts(kMimalloc.linked_program, kMimalloc.name, "");
}
TEST(ProgramsAllocator, MimallocPreloaded) {
  SKIP_IF_MISSING(kMimalloc);
  expect_same_run_and_exact_counts(ALLOC_MIX_BIN, kMimalloc.name, kMimalloc.library);
}

// ---- before the tracer's constructor ---------------------------------------------

// A linked library's constructor keeps 5000 B in a global and leaks 64 B:
// both are in the trace, classified, with the constructor's file:line.
TEST(EarlyAllocations, LinkedLibraryConstructor) {
  TempDir dir;
  std::string trace = dir.file("c.mtr");
  CommandResult r = run_command(kMemtrail + " run -o " + shell_quote(trace) + " -- " CTOR_HOST_BIN);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ctor_host: 1\n");
  Counts t = read_counts(only_trace(trace));
  ASSERT_TRUE(t.result.ok) << t.result.error;
  EXPECT_EQ(t.allocs[5000], 1u);
  EXPECT_EQ(t.classified[memtrail::LeakClass::reachable][5000], 1u);
  EXPECT_EQ(t.classified[memtrail::LeakClass::direct][64], 1u);
  // 3000 start-up malloc/free pairs: more events than a small buffer holds,
  // each free paired with its block.
  EXPECT_EQ(t.allocs[2345], 3000u);
  EXPECT_EQ(t.live_at_exit[2345], 0u);
  EXPECT_EQ(t.unmatched_frees, 0u);
  // A C program: libstdc++ is there only for the tracer, and its start-up
  // pool is not the program's.
  EXPECT_EQ(t.allocs[72704], 0u);
  nlohmann::json j = export_json(dir, trace);
  int kept_sites = 0, leak_sites = 0;
  for (const auto& site : j.at("sites")) {
    // The export names each frame once (`frames`); a site lists their ids.
    nlohmann::json stack = nlohmann::json::array();
    for (const auto& id : site.at("frames"))
      stack.push_back(j.at("frames").at(id.get<std::size_t>()));
    if (stack.empty()) continue;
    std::string file = stack[0].value("file", "");
    if (file.find("ctor_lib.c") == std::string::npos) continue;
    if (site.value("reachable_bytes", 0) == 5000 && stack[0].value("line", 0) == 34) ++kept_sites;
    if (site.value("direct_bytes", 0) == 64 && stack[0].value("line", 0) == 10) ++leak_sites;
  }
  EXPECT_EQ(kept_sites, 1) << j.at("sites").dump(1);
  EXPECT_EQ(leak_sites, 1);
}

// libstdc++'s exception emergency pool (72,704 B since GCC 5), allocated
// by its constructor: in every C++ program's trace, reachable.
TEST(EarlyAllocations, LibstdcxxStartupBlock) {
  TempDir dir;
  std::string trace = dir.file("x.mtr");
  CommandResult r = run_command(kMemtrail + " run -o " + shell_quote(trace) + " -- " CXX_HELLO_BIN);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Counts t = read_counts(only_trace(trace));
  ASSERT_TRUE(t.result.ok) << t.result.error;
  EXPECT_EQ(t.allocs[72704], 1u);
  // The runtime's own (Valgrind's --run-cxx-freeres gives it back): not reachable.
  EXPECT_EQ(t.classified[memtrail::LeakClass::runtime][72704], 1u);
}

// ---- a plugin loaded by a relative path ----------------------------------------------

TEST(ModulePaths, PluginLoadedByARelativePathIsSymbolized) {
  TempDir dir;
  std::string plugin = DLOPEN_PLUGIN;
  std::string plugin_dir = plugin.substr(0, plugin.rfind('/'));
  std::string name = plugin.substr(plugin.rfind('/') + 1);
  std::string trace = dir.file("p.mtr");
  CommandResult r = run_command("cd " + shell_quote(plugin_dir) + " && " + kMemtrail + " run -o " +
                                shell_quote(trace) + " -- " DLOPEN_HOST_BIN " ./" + name);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "dlopen_host: plugin returned 41\n");
  // The report runs elsewhere: the relative name would resolve to nothing.
  CommandResult report =
      run_command("cd " + shell_quote(dir.path()) + " && " + kMemtrail + " report --json p.mtr");
  ASSERT_EQ(report.exit_code, 0) << report.err;
  nlohmann::json j = nlohmann::json::parse(report.out);
  bool named = false;
  for (const auto& site : j.at("leaks").at("sites")) {
    if (site.at("bytes") != 4242 || site.at("stack").empty()) continue;
    const auto& top = site.at("stack")[0];
    named = top.value("function", "").find("plugin_leak") != std::string::npos &&
            top.value("file", "").find("plugin.c") != std::string::npos &&
            top.value("line", 0) == 10 && top.value("module", "") == plugin;
    EXPECT_TRUE(named) << site.dump();
  }
  EXPECT_TRUE(named) << report.out;
}

}  // namespace
