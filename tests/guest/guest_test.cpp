// The tracer as a guest (issue 26): each program runs untraced and under
// `memtrail run`, and must print the same, exit the same, and leave a
// readable trace.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "memtrail/trace_file.hpp"
#include "run_command.hpp"
#include "run_dir.hpp"
#include "temp_dir.hpp"

namespace {

using memtrail::test::CommandResult;
using memtrail::test::run_command;
using memtrail::test::shell_quote;

const std::string kMemtrail = MEMTRAIL_BIN;

struct TempDir : memtrail::test::TempDir {
  TempDir() : memtrail::test::TempDir("guest") {}
};

struct Counter : memtrail::TraceVisitor {
  std::uint64_t allocs = 0;
  void on_event(const memtrail::Event& e) override {
    if (e.kind == memtrail::EventKind::alloc) ++allocs;
  }
};

// Frees of blocks not live, and the blocks of each size live at the end.
struct Leaks : memtrail::TraceVisitor {
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::uint64_t> live;  // -> size
  std::uint64_t unmatched_frees = 0;
  void on_event(const memtrail::Event& e) override {
    if (e.kind == memtrail::EventKind::alloc) live[{e.pool, e.address}] = e.size;
    if (e.kind == memtrail::EventKind::free && live.erase({e.pool, e.address}) == 0)
      ++unmatched_frees;
  }
  std::uint64_t live_of_size(std::uint64_t size) const {
    std::uint64_t n = 0;
    for (const auto& [block, s] : live) n += s == size;
    return n;
  }
};

Leaks read_leaks(const std::string& trace) {
  Leaks leaks;
  memtrail::TraceReader reader(trace);
  reader.read(leaks);
  return leaks;
}

struct Runs {
  CommandResult plain, traced;
  std::string trace;  // the one trace file written
};

// `env` prefixes both commands (VAR=value ...); the hostile programs get
// `timeout`: a hang fails the test instead of stalling it.
Runs run_both(const TempDir& dir, const std::string& env, const std::string& program) {
  Runs r;
  r.plain = run_command(env + " timeout 60 " + program);
  std::string out = dir.file("t.mtr");
  r.traced = run_command(env + " timeout 60 " + kMemtrail + " run -o " + shell_quote(out) + " -- " +
                         program);
  r.trace = memtrail::test::only_trace(out);
  return r;
}

void expect_same_and_readable(const Runs& r) {
  EXPECT_EQ(r.plain.exit_code, 0) << r.plain.err;
  EXPECT_EQ(r.traced.exit_code, r.plain.exit_code) << r.traced.err;
  EXPECT_EQ(r.traced.out, r.plain.out) << r.traced.err;
  ASSERT_FALSE(r.trace.empty()) << r.traced.err;
  Counter counter;
  memtrail::TraceReader reader(r.trace);
  memtrail::ReadResult result = reader.read(counter);
  EXPECT_TRUE(result.ok) << result.error;
  EXPECT_TRUE(memtrail::test::contains(r.traced.err, "trace written")) << r.traced.err;
}

// ---- item 3: the program's own allocator -------------------------------------

// A bump allocator in the executable wins symbol lookup over the preload:
// the tracer's own allocations must not land in it (they crashed ~TraceWriter
// with exit 139) nor be freed through glibc.
TEST(ProgramsOwnMalloc, ExecutableBumpAllocator) {
  TempDir dir;
  Runs r = run_both(dir, "", shell_quote(BUMP_MALLOC_BIN));
  expect_same_and_readable(r);
  EXPECT_EQ(r.plain.out, "sum 19900, bump, mallocs 201, frees 200\n");
}

// With a 16 KiB heap the tracer's allocations exhausted it (std::bad_alloc,
// tracing stopped, then the program's own mallocs failed).
TEST(ProgramsOwnMalloc, ExecutableBumpAllocatorWith16KiB) {
  TempDir dir;
  Runs r = run_both(dir, "BUMP_HEAP_BYTES=16384", shell_quote(BUMP_MALLOC_BIN));
  expect_same_and_readable(r);
  EXPECT_FALSE(memtrail::test::contains(r.traced.err, "bad_alloc")) << r.traced.err;
}

// A preloaded allocator without malloc_usable_size (the scrub asked glibc's,
// which read a foreign header: SIGSEGV) that counts its calls: it must count
// the program's calls only (1035/1021 before, 1001/1000 untraced).
TEST(ProgramsOwnMalloc, PreloadedCountingAllocator) {
  TempDir dir;
  Runs r = run_both(dir, "LD_PRELOAD=" + shell_quote(COUNTING_ALLOCATOR_LIB),
                    shell_quote(COUNTED_PROGRAM_BIN));
  expect_same_and_readable(r);
  EXPECT_TRUE(memtrail::test::contains(r.plain.out, "in main: 1001 mallocs, 1000 frees"))
      << r.plain.out;
}

// ---- a caller outside the calling convention ---------------------------------

// What the trace says of the blocks of 4001..4005 bytes: their allocs' stacks,
// the stack table, and the modules.
struct BlocksOfSizes : memtrail::TraceVisitor {
  std::map<std::uint64_t, std::uint32_t> stack_of_size;  // size -> innermost node
  std::map<std::uint32_t, std::uint64_t> ip_of_node;
  std::vector<memtrail::ModuleInfo> modules;
  void on_module(const memtrail::ModuleInfo& m) override { modules.push_back(m); }
  void on_stack_node(const memtrail::StackNode& n) override { ip_of_node[n.id] = n.ip; }
  void on_event(const memtrail::Event& e) override {
    if (e.kind == memtrail::EventKind::alloc && e.size > 4000 && e.size <= 4005)
      stack_of_size[e.size] = e.stack;
  }
  std::string module_of(std::uint64_t ip) const {
    for (const auto& m : modules)
      if (ip >= m.start && ip < m.end) return m.path;
    return "";
  }
};

// Allocations from hand-written assembly (misaligned_calls.c): no CFI for
// the caller's frame, the stack 8 bytes off the ABI's 16-byte alignment and
// %rbp pointing into a PROT_NONE page. Untraced the program runs (glibc does
// not mind); traced it died of SIGSEGV (exit 139) in the malloc
// interposer's aligned stores. Each block's stack starts in the caller, in
// the executable: the walk goes as far as the frames can be known.
TEST(CallersOwnConvention, MisalignedStackNoCfiAndUnreadableFramePointer) {
  TempDir dir;
  Runs r = run_both(dir, "", shell_quote(MISALIGNED_CALLS_BIN));
  expect_same_and_readable(r);
  if (r.plain.out == "x86-64 only\n") GTEST_SKIP() << "the program's assembly is x86-64";
  EXPECT_EQ(r.plain.out, "blocks: all five\nfreed\ndup2 and close: ok, sigaction: ok\n");
  ASSERT_FALSE(r.trace.empty());
  BlocksOfSizes blocks;
  memtrail::TraceReader(r.trace).read(blocks);
  const std::string program = MISALIGNED_CALLS_BIN;
  for (std::uint64_t size = 4001; size <= 4005; ++size) {
    ASSERT_TRUE(blocks.stack_of_size.contains(size)) << "no alloc of " << size;
    std::uint32_t node = blocks.stack_of_size[size];
    ASSERT_NE(node, 0u) << "no stack for the alloc of " << size;
    EXPECT_EQ(blocks.module_of(blocks.ip_of_node[node]), program) << "size " << size;
  }
  Leaks leaks = read_leaks(r.trace);
  EXPECT_EQ(leaks.unmatched_frees, 0u);
  for (std::uint64_t size = 4001; size <= 4005; ++size) EXPECT_EQ(leaks.live_of_size(size), 0u);
}

// ---- item 6: the scrub ---------------------------------------------------------

// MALLOC_PERTURB_=165: glibc fills fresh blocks with 0x5a; the scrub read
// 0x00 instead.
TEST(ScrubKeepsProgramsView, MallocPerturb) {
  TempDir dir;
  Runs r = run_both(dir, "MALLOC_PERTURB_=165", shell_quote(PERTURB_READ_BIN));
  expect_same_and_readable(r);
  EXPECT_TRUE(memtrail::test::contains(r.plain.out, "24: 5a 5a")) << r.plain.out;
}

int rss_mib(const std::string& out) {
  auto at = out.find("rss_mib ");
  return at == std::string::npos ? -1 : std::stoi(out.substr(at + 8));
}

// 10,000 blocks of 100 KiB with one byte touched each: < 100 MiB untraced,
// ~1000 MiB when the scrub wrote every page.
TEST(ScrubKeepsProgramsView, UntouchedPagesStayUntouched) {
  TempDir dir;
  Runs r = run_both(dir, "", shell_quote(RSS_UNTOUCHED_BIN));
  EXPECT_EQ(r.traced.exit_code, 0) << r.traced.err;
  int plain = rss_mib(r.plain.out), traced = rss_mib(r.traced.out);
  ASSERT_GT(plain, 0) << r.plain.out;
  ASSERT_GT(traced, 0) << r.traced.out;
  EXPECT_LE(traced, plain * 11 / 10 + 16) << "untraced " << plain << " MiB";
}

// ---- item 7: program state ------------------------------------------------------

// A thread's pending dlerror() survives its first munmap (the interposer
// resolved the next munmap with dlsym then, clearing the error).
TEST(ProgramStateKept, PendingDlerror) {
  TempDir dir;
  Runs r = run_both(dir, "", shell_quote(DLERROR_KEPT_BIN));
  expect_same_and_readable(r);
  EXPECT_EQ(r.plain.out, "thread: error kept\nthread: error kept\nmain: error kept\n");
}

// A program creating pthread keys until EAGAIN got 1,022 instead of 1,024
// (the tracer's thread-exit key and libunwind's trace-cache key).
TEST(ProgramStateKept, EveryPthreadKeyIsTheProgramsOwn) {
  TempDir dir;
  Runs r = run_both(dir, "", shell_quote(KEY_PROBE_BIN));
  expect_same_and_readable(r);
  EXPECT_TRUE(memtrail::test::contains(r.plain.out, "(EAGAIN)")) << r.plain.out;
  Leaks leaks = read_leaks(r.trace);
  EXPECT_EQ(leaks.unmatched_frees, 0u);
  EXPECT_EQ(leaks.live_of_size(32), 0u) << "the key destructors' frees are in the trace";
}

// A program that closed stderr and opened its log as descriptor 2 found the
// tracer's note (its fork child's, about the low descriptor limit) in it.
TEST(ProgramStateKept, StderrReusedForTheProgramsLog) {
  TempDir dir;
  std::string plain_log = dir.file("plain.log"), traced_log = dir.file("traced.log");
  CommandResult plain =
      run_command("timeout 60 " + shell_quote(STDERR_REUSED_BIN) + " " + shell_quote(plain_log));
  CommandResult traced =
      run_command("timeout 60 " + kMemtrail + " run -o " + shell_quote(dir.file("t.mtr")) + " -- " +
                  shell_quote(STDERR_REUSED_BIN) + " " + shell_quote(traced_log));
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(traced.exit_code, 0) << traced.err;
  EXPECT_EQ(plain.out, "log (20 bytes):\nprogram: log opened\n");
  EXPECT_EQ(traced.out, plain.out);
  EXPECT_TRUE(memtrail::test::contains(traced.err, "trace written")) << traced.err;
}

// An AddressSanitizer binary aborted ("ASan runtime does not come first")
// and memtrail said only "did not start tracing": one line saying why.
TEST(ProgramStateKept, AddressSanitizerBinaryIsRefusedInOneLine) {
  if (std::string(ASAN_HELLO_BIN).empty())
    GTEST_SKIP() << "the compiler cannot build -fsanitize=address programs (libasan missing)";
  TempDir dir;
  Runs r = run_both(dir, "", shell_quote(ASAN_HELLO_BIN));
  EXPECT_EQ(r.plain.exit_code, 0) << r.plain.err;
  EXPECT_EQ(r.plain.out, "asan hello a\n");
  EXPECT_EQ(r.traced.exit_code, 2);
  EXPECT_EQ(r.traced.out, "");
  EXPECT_EQ(r.traced.err_lines(), 1) << r.traced.err;
  EXPECT_TRUE(memtrail::test::contains(r.traced.err, "AddressSanitizer")) << r.traced.err;
  EXPECT_TRUE(memtrail::test::contains(r.traced.err, "LD_PRELOAD")) << r.traced.err;
  EXPECT_TRUE(r.trace.empty());
}

}  // namespace
