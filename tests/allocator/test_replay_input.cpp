// `memtrail replay` and the pools on hostile input (issue 15 items 12-14):
// absurd sizes are refused at once without wrapping, scripts are read as a
// stream with a bounded line, inputs that are not a script or trace say so,
// and a cut trace follows the rule of `report` (refused without --partial).
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "../analyzer/trace_builder.hpp"
#include "memtrail/alloc/bfc_pool.hpp"
#include "memtrail/alloc/caching_pool.hpp"
#include "memtrail/alloc/virtual_resource.hpp"
#include "test_util.hpp"

namespace {

using memtrail::test::CommandResult;
using memtrail::test::contains;
using memtrail::test::run_command;
using memtrail::test::shell_quote;
using memtrail::test::TempDir;
using nlohmann::json;
using namespace memtrail::alloc;

// `timeout`: before the fix, a bfc replay of an absurd size ran ~10 minutes.
CommandResult replay(const std::string& args) {
  return run_command("timeout 60 " + std::string(MEMTRAIL_CLI) + " replay " + args);
}

TEST(ReplayInput, SizesAboveInt64AreAnErrorNamingTheLineForEveryAllocator) {
  TempDir dir;
  for (const char* size :
       {"18446744073709551000", "18446744073709551615", "9223372036854775808", "8388608 TiB"}) {
    const std::string script = dir.file("big.txt", std::string("stats\nA = malloc ") + size + "\n");
    for (const char* allocator : {"caching", "bfc", "malloc"}) {
      SCOPED_TRACE(std::string(allocator) + " " + size);
      auto r = replay(shell_quote(script) + " --allocator " + allocator);
      EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
      EXPECT_EQ(r.err_lines(), 1) << r.err;
      EXPECT_TRUE(contains(r.err, "big.txt:2: size ")) << r.err;
      EXPECT_TRUE(contains(r.err, "is more than any request can be (9223372036854775807 bytes"))
          << r.err;
    }
  }
}

// The issue's own command: a script piped in with no input named is read
// from stdin, and the absurd size is an error at once.
TEST(ReplayInput, PipedScriptWithNoInputNamedIsReadFromStdin) {
  auto r = run_command("echo 'A = malloc 18446744073709551000' | timeout 60 " +
                       std::string(MEMTRAIL_CLI) + " replay --allocator bfc");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_TRUE(contains(r.err, "stdin:1: size ")) << r.err;
}

// The largest size a script may ask for: every allocator reports an OOM at
// its line, as the real one would on a device that cannot hold it, and no
// stat wraps negative.
TEST(ReplayInput, LargestSizeIsAnOomWithoutWrappingAnyStat) {
  TempDir dir;
  const std::string script =
      dir.file("max.txt", "A = malloc 9223372036854775807\nB = malloc 1000\nstats\nfree B\n");
  for (const char* allocator : {"caching", "bfc", "malloc"}) {
    SCOPED_TRACE(allocator);
    auto r = replay(shell_quote(script) + " --json --allocator " + allocator);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto lines = r.out_lines();
    ASSERT_EQ(lines.size(), 3u) << r.out;
    json oom = json::parse(lines[0]).at("oom");
    EXPECT_EQ(oom.at("line"), 1);
    const json stats = json::parse(lines[1]);
    for (const auto& [key, value] : stats.items()) {
      if (key != "max_split_size") {
        EXPECT_GE(value.get<std::int64_t>(), 0) << key;
      }
    }
    json summary = json::parse(lines[2]).at("replay_summary");
    EXPECT_EQ(summary.at("ooms"), 1);
    EXPECT_LT(summary.at("peak_allocated_bytes").get<std::uint64_t>(), 1u << 20);
  }
}

TEST(ReplayInput, PoolsRefuseSizesTheirRoundingWouldWrap) {
  VirtualResource device;
  CachingPool caching(device, CachingConfig{}, "caching");
  EXPECT_THROW(caching.malloc(UINT64_MAX, 0), OutOfMemoryError);
  EXPECT_THROW(caching.malloc(kMaxRequestBytes + 1, 0), OutOfMemoryError);
  EXPECT_EQ(caching.allocated_bytes(), 0u);
  EXPECT_EQ(caching.memory_stats().at("requested_bytes.all.current"), 0);

  VirtualResource bfc_device;
  BfcOptions o;
  o.preallocate = false;
  BfcPool bfc(bfc_device, o, "bfc");
  EXPECT_THROW(bfc.allocate_raw(UINT64_MAX - 100), OutOfMemoryError);
  EXPECT_EQ(bfc.stats().bytes_in_use, 0);
  // Below the limit the pool still serves, and a request the device cannot
  // hold is an ordinary OOM.
  void* p = bfc.allocate_raw(1000);
  EXPECT_NE(p, nullptr);
  EXPECT_THROW(bfc.allocate_raw(kMaxRequestBytes), OutOfMemoryError);
  bfc.deallocate_raw(p);
}

TEST(ReplayInput, InputsThatAreNoScriptSaySoWithExit2) {
  TempDir dir;
  const std::string empty = dir.file("empty.txt", "");
  const std::string comments = dir.file("comments.txt", "# only\n\n# comments\n");
  struct Case {
    std::string args, err;
  };
  const std::vector<Case> cases = {
      {shell_quote(empty), empty + ": empty: not a replay script or trace"},
      {"/dev/null", "/dev/null: empty: not a replay script or trace"},
      {shell_quote(dir.path), dir.path + ": is a directory, not a replay script or trace"},
      {shell_quote(comments),
       comments + ": no operations in 3 lines: not a replay script or trace"},
      {shell_quote(dir.path + "/missing.txt"),
       dir.path + "/missing.txt: cannot open replay script: No such file or directory"},
  };
  for (const Case& c : cases) {
    auto r = replay(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.out;
    EXPECT_EQ(r.err, "memtrail replay: " + c.err + "\n");
    EXPECT_EQ(r.out, "") << c.args;
  }
}

TEST(ReplayInput, BinaryAndOverlongLinesStopAtOnceWithBoundedMemory) {
  TempDir dir;
  const std::string zeros = dir.path + "/zeros.bin";
  ASSERT_EQ(run_command("dd if=/dev/zero bs=1M count=1 of=" + shell_quote(zeros)).exit_code, 0);
  auto z = replay(shell_quote(zeros));
  EXPECT_EQ(z.exit_code, 2);
  EXPECT_EQ(z.err, "memtrail replay: " + zeros + ":1: a NUL byte: not a text replay script\n");
  // 256 MB of text without a newline, through a pipe: refused at 4 KiB, in
  // far less memory than the line (max RSS in KiB from /usr/bin/time).
  auto x = run_command("head -c 268435456 /dev/zero | tr '\\0' x | /usr/bin/time -f 'rss=%M' " +
                       std::string(MEMTRAIL_CLI) + " replay -");
  EXPECT_EQ(x.exit_code, 2) << x.err;
  EXPECT_TRUE(contains(x.err, "memtrail replay: stdin:1: line longer than 4096 bytes")) << x.err;
  const auto at = x.err.find("rss=");
  ASSERT_NE(at, std::string::npos) << x.err;
  EXPECT_LT(std::stoul(x.err.substr(at + 4)), 64u * 1024) << x.err;
}

TEST(ReplayInput, ScriptsStreamFromStdin) {
  auto r = run_command("printf 'A = malloc 1000\\nstats\\nfree A\\n' | " +
                       std::string(MEMTRAIL_CLI) + " replay - --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = r.out_lines();
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(json::parse(lines[0]).at("allocated_bytes.all.current"), 1024);
  EXPECT_EQ(json::parse(lines[1]).at("replay_summary").at("ops"), 3);
}

TEST(ReplayInput, CutTraceIsRefusedWithoutPartialLikeReport) {
  std::string bytes;
  {
    memtrail::test::TraceBuilder b(memtrail::test::temp_trace("replay-cut-src.mtr"));
    b.pool(1, "malloc", memtrail::PoolKind::heap);
    b.alloc(1, 1, 0x1000, 1000);
    b.writer().flush();
    b.alloc(2, 1, 0x2000, 2000);
    bytes = memtrail::test::slurp(b.finish());
  }
  TempDir dir;
  const std::string cut = dir.file("cut.mtr", bytes.substr(0, bytes.size() - 7));
  auto r = replay(shell_quote(cut));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_TRUE(contains(r.err, "cut.mtr: cut file: ")) << r.err;
  EXPECT_TRUE(contains(r.err, "(--partial replays what was read)")) << r.err;
  // report says the same of the same file.
  EXPECT_EQ(run_command(std::string(MEMTRAIL_CLI) + " report " + shell_quote(cut)).exit_code, 2);

  auto p = replay(shell_quote(cut) + " --partial --json");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(p.err_lines(), 1) << p.err;
  EXPECT_TRUE(contains(p.err, "memtrail replay: warning: " + cut + ": cut file: ")) << p.err;
  EXPECT_EQ(json::parse(p.out).at("replay_summary").at("mallocs"), 2);
}

}  // namespace
