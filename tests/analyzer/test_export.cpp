// Exports checked by their real consumers: sqlite3 queries the database,
// protoc decodes the pprof profile against pprof's schema, the Chrome JSON
// parses and carries the documented counters; folded lines are exact.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "trace_builder.hpp"

namespace memtrail {
namespace {

using nlohmann::json;
using test::memtrail;
using test::run_command;
using test::shell_quote;
using test::temp_trace;
using test::TraceBuilder;

bool have(const char* tool) {
  return run_command(std::string("command -v ") + tool).exit_code == 0;
}

// Heap pool (trace_builder.hpp's heap events; stack 3 called from stack 2) plus a caching
// pool with one segment, and process samples.
void write_trace(TraceBuilder& b) {
  b.pool(1, "malloc", PoolKind::heap);
  b.pool(2, "cache", PoolKind::caching, 0, MemorySpace::device, 0);
  b.stack(1, 0, 0x1000);
  b.stack(2, 0, 0x2000);
  b.stack(3, 2, 0x3000);  // 0x3000 called from 0x2000
  test::write_heap_events(b);
  b.segment(80, EventKind::segment_reserve, 2, 0x100000, 4 << 20);
  b.alloc(90, 2, 0x100000, 2 << 20, 3);
  b.sample(100, 8 << 20, 1000, 4096);
  b.mark(110, 1, "epoch 1");
}

TEST(Export, FoldedLinesAreExact) {
  TraceBuilder b(temp_trace("folded.mtr"));
  write_trace(b);
  const std::string& path = b.finish();
  auto r = memtrail("export --no-symbols --format folded --cost bytes " + shell_quote(path));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "[cache];0x2000;0x3000 2097152\n"
            "[malloc];0x1000 150\n"
            "[malloc];0x2000 200\n"
            "[malloc];0x2000;0x3000 300\n");
  auto t = memtrail("export --no-symbols --format folded --cost temporary " + shell_quote(path));
  EXPECT_EQ(t.out, "[malloc];0x1000 1\n");
  auto l = memtrail("export --no-symbols --format folded --cost leaked " + shell_quote(path));
  EXPECT_EQ(l.out, "[cache];0x2000;0x3000 2097152\n[malloc];0x2000;0x3000 300\n");
  EXPECT_EQ(memtrail("export --format folded --cost weight " + shell_quote(path)).exit_code, 2);
  EXPECT_EQ(memtrail("export --format svg " + shell_quote(path)).exit_code, 2);
  EXPECT_EQ(memtrail("export --format sqlite " + shell_quote(path)).exit_code, 2);  // needs -o
}

// A cache over an upstream "system" pool that records the cache's segment as
// its own 4096-byte alloc: the flame graph shows the cache's bytes once.
TEST(Export, FoldedCountsLeafPoolsOnly) {
  TraceBuilder b(temp_trace("folded-tree.mtr"));
  b.pool(1, "system", PoolKind::system);
  b.pool(2, "cache", PoolKind::caching, 1);
  b.stack(1, 0, 0x1000);
  b.stack(2, 0, 0x2000);
  b.alloc(1, 1, 0x10000, 4096, 1);
  b.segment(1, EventKind::segment_reserve, 2, 0x10000, 4096);
  b.alloc(2, 2, 0x10000, 1024, 2);
  auto r = memtrail("export --no-symbols --format folded --cost bytes " + shell_quote(b.finish()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "[cache];0x2000 1024\n");
}

TEST(Export, ChromeTraceHasDocumentedCountersAndSlices) {
  TraceBuilder b(temp_trace("chrome.mtr"));
  write_trace(b);
  auto r = memtrail("export --no-symbols --format chrome " + shell_quote(b.finish()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_TRUE(j["traceEvents"].is_array());
  std::uint64_t max_cache_used = 0, max_cache_reserved = 0, max_rss = 0;
  int slices = 0, marks = 0;
  for (const auto& e : j["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("name"));
    if (e["ph"] == "C") {
      ASSERT_FALSE(e["args"].empty());
      if (e["name"] == "pool cache") {
        max_cache_used = std::max<std::uint64_t>(max_cache_used, e["args"]["used"]);
        max_cache_reserved = std::max<std::uint64_t>(max_cache_reserved, e["args"]["reserved"]);
      }
      if (e["name"] == "process") max_rss = std::max<std::uint64_t>(max_rss, e["args"]["rss"]);
    }
    if (e["ph"] == "X") {
      ++slices;
      EXPECT_EQ(e["args"]["size"], 2 << 20);
      EXPECT_EQ(e["args"]["pool"], "cache");
    }
    if (e["ph"] == "i") {
      ++marks;
      EXPECT_EQ(e["name"], "epoch 1");
    }
  }
  EXPECT_EQ(max_cache_used, 2u << 20);
  EXPECT_EQ(max_cache_reserved, 4u << 20);
  EXPECT_EQ(max_rss, 8u << 20);
  EXPECT_EQ(slices, 1);  // only blocks >= 1 MiB
  EXPECT_EQ(marks, 1);
}

TEST(Export, JsonCarriesEverySiteAndTimelines) {
  TraceBuilder b(temp_trace("json.mtr"));
  write_trace(b);
  auto r = memtrail("export --no-symbols --format json " + shell_quote(b.finish()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["schema"], "memtrail.report/1");
  EXPECT_EQ(j["sites"].size(), 4u);
  EXPECT_EQ(j["marks"][0]["text"], "epoch 1");
  EXPECT_TRUE(j["pools"][0]["timeline"]["used"]["value"].is_array());
  EXPECT_EQ(j["large_blocks"].size(), 1u);
}

TEST(Export, SqliteDatabaseAnswersQueries) {
  if (!have("sqlite3")) GTEST_SKIP() << "sqlite3 not installed (apt install sqlite3)";
  TraceBuilder b(temp_trace("sqlite.mtr"));
  write_trace(b);
  std::string db = temp_trace("export.db");
  auto r = memtrail("export --no-symbols --format sqlite -o " + shell_quote(db) + " " +
                    shell_quote(b.finish()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto q = run_command("sqlite3 " + shell_quote(db) +
                       " \"SELECT count(*) FROM events;"
                       " SELECT count(*) FROM events WHERE kind='alloc';"
                       " SELECT sum(leaked_bytes) FROM sites;"
                       " SELECT name || '=' || peak_used_bytes FROM pools ORDER BY id;"
                       " SELECT pool || ':' || leaked_bytes FROM leaks ORDER BY leaked_bytes;"
                       " SELECT count(*) FROM frames;"
                       " SELECT text FROM marks;\"");
  ASSERT_EQ(q.exit_code, 0) << q.err;
  EXPECT_EQ(q.out,
            "11\n"
            "5\n"
            "2097452\n"
            "malloc=300\n"
            "cache=2097152\n"
            "malloc:300\n"
            "cache:2097152\n"
            "6\n"
            "epoch 1\n");
  // Range restricts the events table too.
  r = memtrail("export --no-symbols --format sqlite --from 25 --to 65 -o " + shell_quote(db) + " " +
               shell_quote(b.path()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  q = run_command("sqlite3 " + shell_quote(db) + " 'SELECT count(*) FROM events'");
  EXPECT_EQ(q.out, "4\n");
  std::remove(db.c_str());
}

TEST(Export, PprofDecodesWithPprofSchema) {
  if (!have("protoc") || !have("gunzip"))
    GTEST_SKIP() << "protoc or gunzip not installed (apt install protobuf-compiler gzip)";
  TraceBuilder b(temp_trace("pprof.mtr"));
  write_trace(b);
  std::string out = temp_trace("profile.pb.gz");
  auto r = memtrail("export --no-symbols --format pprof -o " + shell_quote(out) + " " +
                    shell_quote(b.finish()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto raw = run_command("gunzip -c " + shell_quote(out) + " | protoc --decode_raw");
  ASSERT_EQ(raw.exit_code, 0) << raw.err;
  auto d = run_command("gunzip -c " + shell_quote(out) +
                       " | protoc --proto_path=" + shell_quote(MEMTRAIL_TEST_DIR) +
                       " --decode=perftools.profiles.Profile profile.proto");
  ASSERT_EQ(d.exit_code, 0) << d.err;
  // Four sample types in the Go heap convention.
  for (const char* s : {"\"alloc_objects\"", "\"alloc_space\"", "\"inuse_objects\"",
                        "\"inuse_space\"", "\"count\"", "\"bytes\""})
    EXPECT_NE(d.out.find(s), std::string::npos) << s;
  // Four sites -> four samples; the 0x2000 -> 0x3000 heap site: 1 object, 300 B, live.
  std::size_t n = 0;
  for (std::size_t p = d.out.find("sample {"); p != std::string::npos;
       p = d.out.find("sample {", p + 1))
    ++n;
  EXPECT_EQ(n, 4u);
  EXPECT_NE(d.out.find("value: 1\n  value: 300\n  value: 1\n  value: 300"), std::string::npos)
      << d.out;
  EXPECT_NE(d.out.find("address: 12288"), std::string::npos);  // 0x3000
  std::remove(out.c_str());
}

}  // namespace
}  // namespace memtrail

namespace memtrail {
namespace {

// Chrome's `leaked` on a large block means what `report` counts: a block
// reachable at exit is live, not leaked (issue 20: exports counted it).
TEST(Export, ChromeLeakedFlagLeavesReachableBlocksOut) {
  TraceBuilder b(temp_trace("chrome-leaks.mtr"));
  b.pool(1, "malloc", PoolKind::heap);
  b.stack(1, 0, 0x1000);
  b.alloc(10, 1, 0x100000, 2 << 20, 1);  // reachable at exit
  b.alloc(20, 1, 0x400000, 3 << 20, 1);  // lost
  b.reachability(30, 1, 0x100000, 2 << 20, LeakClass::reachable);
  b.reachability(30, 1, 0x400000, 3 << 20, LeakClass::direct);
  const std::string& path = b.finish();
  auto r = memtrail("report --json --no-symbols " + shell_quote(path));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["summary"]["leaked_bytes"], 3 << 20);
  auto c = memtrail("export --no-symbols --format chrome " + shell_quote(path));
  ASSERT_EQ(c.exit_code, 0) << c.err;
  std::uint64_t leaked = 0, live = 0;
  json chrome = json::parse(c.out);  // named: the loop reads into it
  for (const auto& e : chrome["traceEvents"])
    if (e["ph"] == "X")
      (e["args"]["leaked"] ? leaked : live) += e["args"]["size"].get<std::uint64_t>();
  EXPECT_EQ(leaked, 3u << 20);
  EXPECT_EQ(live, 2u << 20);
  auto j = memtrail("export --no-symbols --format json " + shell_quote(path));
  ASSERT_EQ(j.exit_code, 0) << j.err;
  json blocks = json::parse(j.out)["large_blocks"];
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0]["leak"], "reachable");
  EXPECT_EQ(blocks[1]["leak"], "direct");
}

}  // namespace
}  // namespace memtrail
