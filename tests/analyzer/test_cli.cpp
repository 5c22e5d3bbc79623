// The real `memtrail` binary: report text and JSON schema, bad input (one
// line on stderr, exit 2), cut and unfinished traces, diff.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "trace_builder.hpp"

namespace memtrail {
namespace {

using nlohmann::json;
using test::memtrail;
using test::shell_quote;
using test::temp_trace;
using test::TraceBuilder;

// A heap trace spread over several chunks (flush after every 100 events):
// 1000 allocations of 64 B, all freed but the last 10 (640 B leaked).
void write_multi_chunk(TraceBuilder& b) {
  b.pool(1, "malloc", PoolKind::heap);
  b.stack(1, 0, 0x1000);
  std::uint64_t t = 0;
  for (int i = 0; i < 1000; ++i) {
    b.alloc(++t, 1, 0x10000 + 0x100 * i, 64, 1);
    if (i < 990) b.free(++t, 1, 0x10000 + 0x100 * i);
    if (i % 50 == 49) b.writer().flush();
  }
}

std::string write_file(const std::string& name, const std::string& bytes) {
  std::string path = temp_trace(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(Cli, ReportTextShowsSummaryAndLeaks) {
  TraceBuilder b(temp_trace("cli-text.mtr"));
  write_multi_chunk(b);
  auto r = memtrail("report --no-symbols " + shell_quote(b.finish()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("SUMMARY"), std::string::npos);
  EXPECT_NE(r.out.find("allocations            1000 (62.50 KiB)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("temporary allocations  990"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("leaked                 640 B in 10 blocks"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("direct leak: 640 B in 10 blocks"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("POOLS"), std::string::npos);
}

TEST(Cli, ReportJsonHasTheStableSchema) {
  TraceBuilder b(temp_trace("cli-json.mtr"));
  write_multi_chunk(b);
  auto r = memtrail("report --json --no-symbols " + shell_quote(b.finish()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["schema"], "memtrail.report/1");
  for (const char* k : {"events", "allocations", "frees", "temporary_allocations",
                        "peak_used_bytes", "leaked_bytes", "leaked_blocks"})
    EXPECT_TRUE(j["summary"].contains(k)) << k;
  for (const char* k : {"direct_bytes", "direct_blocks", "indirect_bytes", "indirect_blocks",
                        "reachable_bytes", "reachable_blocks", "sites"})
    EXPECT_TRUE(j["leaks"].contains(k)) << k;
  for (const char* k : {"bytes", "blocks", "kind", "stack"})
    EXPECT_TRUE(j["leaks"]["sites"][0].contains(k)) << k;
  for (const char* k : {"function", "file", "line", "module"})
    EXPECT_TRUE(j["leaks"]["sites"][0]["stack"][0].contains(k)) << k;
  for (const char* k :
       {"name", "kind", "space", "device", "peak_used_bytes", "peak_reserved_bytes",
        "final_used_bytes", "final_reserved_bytes", "allocations", "reuses", "segment_reserves"})
    EXPECT_TRUE(j["pools"][0].contains(k)) << k;
  EXPECT_TRUE(j["scopes"].is_array());
  EXPECT_EQ(j["summary"]["events"], 1990);
  EXPECT_EQ(j["summary"]["allocations"], 1000);
  EXPECT_EQ(j["summary"]["frees"], 990);
  EXPECT_EQ(j["summary"]["temporary_allocations"], 990);
  EXPECT_EQ(j["summary"]["peak_used_bytes"], 640);
  EXPECT_EQ(j["summary"]["leaked_bytes"], 640);
  EXPECT_EQ(j["summary"]["leaked_blocks"], 10);
  EXPECT_EQ(j["leaks"]["sites"][0]["kind"], "direct");
  EXPECT_EQ(j["pools"][0]["name"], "malloc");
  EXPECT_EQ(j["pools"][0]["kind"], "heap");
  EXPECT_EQ(j["pools"][0]["space"], "host");
}

TEST(Cli, RangeOptionsAcceptUnitsAndMarks) {
  TraceBuilder b(temp_trace("cli-range.mtr"));
  write_multi_chunk(b);  // times 1..1990 ns
  const std::string& path = b.finish();
  auto r = memtrail("report --json --no-symbols --from 1us --to 1990ns " + shell_quote(path));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["summary"]["events"], 991);  // times 1000..1990
  EXPECT_EQ(j["range"]["from_ns"], 1000);
  auto bad = memtrail("report --from-mark nowhere " + shell_quote(path));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err_lines(), 1) << bad.err;
  EXPECT_NE(bad.err.find("mark 'nowhere' not found"), std::string::npos) << bad.err;
}

struct BadInput {
  std::string args;
  std::string expect;  // substring of the one stderr line
};

TEST(Cli, BadInputGivesOneLineAndExit2) {
  TraceBuilder good(temp_trace("cli-good.mtr"));
  write_multi_chunk(good);
  std::string bytes = test::slurp(good.finish());
  ASSERT_GT(bytes.size(), 200u);

  std::string empty = write_file("empty.mtr", "");
  std::string text = write_file("text.mtr", "this is not a trace at all, just some text\n");
  std::string version = bytes;
  version[8] = 7;  // u16 version right after the 8-byte magic
  std::string wrong_version = write_file("version.mtr", version);
  std::string cut = write_file("cut.mtr", bytes.substr(0, bytes.size() - 7));
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x5A;
  std::string corrupt = write_file("corrupt.mtr", flipped);

  std::vector<BadInput> cases = {
      {shell_quote(empty), "empty.mtr"},
      {shell_quote(text), "not a memtrail trace"},
      {shell_quote(wrong_version), "unsupported version 7"},
      // The file is named once, the cut in bytes.
      {shell_quote(cut), cut + ": cut file: dropped "},
      {shell_quote(corrupt), "corrupt.mtr"},
      {"/nonexistent/x.mtr", "/nonexistent/x.mtr"},
      {"", "missing trace FILE"},
      {"--bogus " + shell_quote(good.path()), "unknown option '--bogus'"},
      {"--top lots " + shell_quote(good.path()), "--top: 'lots' is not a non-negative integer"},
      {"--from 5xs " + shell_quote(good.path()), "--from '5xs': unknown unit"},
      {"--from 9 --to 3 " + shell_quote(good.path()), "is after --to"},
      {"--top", "--top needs a value"},
  };
  for (const auto& c : cases) {
    auto r = memtrail("report " + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_EQ(r.err_lines(), 1) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_EQ(r.out, "") << c.args;
  }
  // The same files through diff and export fail the same way.
  EXPECT_EQ(memtrail("diff " + shell_quote(text) + " " + shell_quote(good.path())).exit_code, 2);
  EXPECT_EQ(memtrail("export --format json " + shell_quote(corrupt)).exit_code, 2);
  for (const auto& p : {empty, text, wrong_version, cut, corrupt}) std::remove(p.c_str());
}

TEST(Cli, DecoderThreadCountFromTheEnvironmentIsCheckedAndHonoured) {
  TraceBuilder b(temp_trace("cli-decoders.mtr"));
  write_multi_chunk(b);
  const std::string trace = shell_quote(b.finish());
  auto pipeline = memtrail("report --json --no-symbols " + trace);
  ASSERT_EQ(pipeline.exit_code, 0) << pipeline.err;
  // Chunk-parallel decoding gives the same report.
  auto parallel = test::run_command("MEMTRAIL_DECODERS=2 " + std::string(MEMTRAIL_BIN) +
                                    " report --json --no-symbols " + trace);
  ASSERT_EQ(parallel.exit_code, 0) << parallel.err;
  EXPECT_EQ(json::parse(parallel.out)["summary"], json::parse(pipeline.out)["summary"]);
  EXPECT_EQ(json::parse(parallel.out)["leaks"], json::parse(pipeline.out)["leaks"]);
  for (const char* bad : {"two", "9", "-1", "2x"}) {
    auto r = test::run_command(std::string("MEMTRAIL_DECODERS=") + bad + " " +
                               std::string(MEMTRAIL_BIN) + " report " + trace);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_EQ(r.err, std::string("memtrail report: MEMTRAIL_DECODERS='") + bad +
                         "': expected a number of decoder threads from 0 to 8 (0 = the pipeline)\n")
        << bad;
  }
}

TEST(Cli, CutFileNamesDroppedBytesAndPartialAnalyzesTheRest) {
  TraceBuilder good(temp_trace("cli-cut-src.mtr"));
  write_multi_chunk(good);
  std::string bytes = test::slurp(good.finish());
  std::string cut = write_file("cli-cut.mtr", bytes.substr(0, bytes.size() - 7));
  auto r = memtrail("report --json " + shell_quote(cut));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_NE(r.err.find("bytes"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--partial"), std::string::npos) << r.err;

  auto p = memtrail("report --json --partial " + shell_quote(cut));
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(p.err_lines(), 1) << p.err;
  EXPECT_NE(p.err.find("warning"), std::string::npos) << p.err;
  // Only the end marker was cut: every event is still there.
  json j = json::parse(p.out);
  EXPECT_EQ(j["summary"]["allocations"], 1000);
  EXPECT_EQ(j["summary"]["leaked_blocks"], 10);
  std::remove(cut.c_str());
}

TEST(Cli, TraceWithoutEndMarkerIsAnalyzedWithANote) {
  // A program killed between flushes: whole chunks, no end marker.
  std::string path = temp_trace("cli-killed.mtr");
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto* b = new TraceBuilder(path);  // never destroyed: no finish()
    b->pool(1, "malloc", PoolKind::heap);
    b->alloc(1, 1, 0x10, 100);
    b->alloc(2, 1, 0x20, 200);
    b->writer().flush();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  auto r = memtrail("report --json --no-symbols " + shell_quote(path));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_NE(r.err.find("no end-of-trace marker"), std::string::npos) << r.err;
  // One flush wrote one chunk: said in the singular.
  EXPECT_NE(r.err.find("; analyzed 1 whole chunk\n"), std::string::npos) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["summary"]["leaked_bytes"], 300);
  std::remove(path.c_str());
}

TEST(Cli, DiffMatchesSitesByStackAndSortsByImpact) {
  TraceBuilder a(temp_trace("diff-a.mtr"));
  TraceBuilder b(temp_trace("diff-b.mtr"));
  for (TraceBuilder* t : {&a, &b}) {
    t->pool(1, "malloc", PoolKind::heap);
    t->stack(1, 0, 0x1000);
    t->stack(2, 0, 0x2000);
  }
  // A: site 0x1000 leaks 100 B. B: the same site under another stack id
  // (ids are per trace) leaks 100 B, and site 0x2000 newly leaks 5000 B.
  a.alloc(1, 1, 0x10, 100, 1);
  b.stack(3, 0, 0x1000);
  b.alloc(1, 1, 0x10, 100, 3);
  b.alloc(2, 1, 0x20, 5000, 2);
  auto r = memtrail("diff --json --no-symbols " + shell_quote(a.finish()) + " " +
                    shell_quote(b.finish()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["schema"], "memtrail.diff/1");
  EXPECT_EQ(j["summary"]["leaked_bytes"]["delta"], 5000);
  ASSERT_EQ(j["sites"].size(), 1u);  // the unchanged 0x1000 site is not listed
  EXPECT_EQ(j["sites"][0]["leaked_bytes"]["a"], 0);
  EXPECT_EQ(j["sites"][0]["leaked_bytes"]["b"], 5000);
  EXPECT_EQ(j["sites"][0]["stack"][0]["address"], 0x2000);
  EXPECT_EQ(j["pools"][0]["peak_used_bytes"]["delta"], 5000);
  auto text = memtrail("diff --no-symbols " + shell_quote(a.path()) + " " + shell_quote(b.path()));
  ASSERT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("leaked +4.88 KiB (+1 blocks)"), std::string::npos) << text.out;
  EXPECT_EQ(memtrail("diff " + shell_quote(a.path())).exit_code, 2);
}

}  // namespace
}  // namespace memtrail
