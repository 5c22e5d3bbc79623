// `report`'s text and `report --json` of one fixed trace, byte for byte
// against files kept in tests/analyzer/golden/: a change made for speed
// (decoding, the analysis pass, symbolization, the JSON writer) must not
// change one byte of either. A deliberate change of the output regenerates
// them: MEMTRAIL_UPDATE_GOLDEN=1 build/bin/test_analyzer
// --gtest_filter='ReportGolden*', and the diff goes in the same commit.
//
// The trace: churn over a tree of 150 stacks from a fixed generator (two
// threads, cross-thread frees, lifetimes from at once to never), a free
// recorded before its allocation, an allocation over a live block, a
// caching pool over the heap with segments, a scope, marks, samples and the
// reachability classes at exit.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "memtrail/analysis.hpp"
#include "memtrail/report_json.hpp"
#include "memtrail/report_text.hpp"
#include "trace_builder.hpp"

namespace memtrail {
namespace {

using test::temp_trace;
using test::TraceBuilder;

constexpr std::uint32_t kStacks = 150;

struct Rng {
  std::uint64_t s = 0x9E3779B97F4A7C15ull;
  std::uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
};

void write_stacks(TraceBuilder& b) {
  // A tree: 10 roots' chains of depth 1..10 and leaves under them.
  std::uint32_t id = 1;
  for (std::uint32_t r = 0; r < 10; ++r) {
    std::uint32_t parent = 0;
    for (std::uint32_t d = 0; d <= r; ++d, ++id) {
      b.stack(id, parent, 0x400000 + r * 0x1000 + d * 0x10);
      parent = id;
    }
  }
  for (std::uint32_t parent = 1; id <= kStacks; ++id, parent = parent % 55 + 1)
    b.stack(id, parent, 0x500000 + id * 0x20);
}

void write_churn(TraceBuilder& b, std::uint64_t& t) {
  Rng rng;
  constexpr std::uint32_t kSlots = 512;
  std::uint64_t live[kSlots] = {};
  for (std::uint32_t i = 0; i < 20000; ++i) {
    std::uint32_t slot = static_cast<std::uint32_t>(rng.next() % kSlots);
    std::uint32_t thread = 1 + static_cast<std::uint32_t>(rng.next() % 2);
    if (live[slot]) {
      b.free(t++, 1, live[slot], thread);
      live[slot] = 0;
      if (rng.next() % 3 == 0) continue;
    }
    std::uint64_t address = 0x10000000 + (slot * 97 + i % 7) * 0x100;
    std::uint64_t size = 16 + rng.next() % 4096;
    std::uint32_t stack = 1 + static_cast<std::uint32_t>(rng.next() % kStacks);
    b.alloc(t++, 1, address, size, stack, thread);
    if (rng.next() % 4 == 0) {
      b.free(t++, 1, address, thread);  // a temporary
    } else {
      live[slot] = address;
    }
    if (i % 1000 == 0) b.sample(t++, 50'000'000 + i * 1000, 1'000'000 + i * 100, 4'000'000);
    t += rng.next() % 500;
  }
  for (std::uint32_t s = 0; s < kSlots; s += 2)
    if (live[s])
      b.reachability(t++, 1, live[s], 0, s % 4 ? LeakClass::reachable : LeakClass::direct);
}

std::string write_trace(TraceBuilder& b) {
  b.pool(1, "malloc", PoolKind::heap);
  b.pool(3, "arena", PoolKind::heap);
  b.pool(2, "cache", PoolKind::caching, 3);  // over its own upstream: the heap stays a leaf
  b.writer().add_scope(ScopeInfo{1, "step", ScopeKind::user, 0});
  write_stacks(b);
  std::uint64_t t = 100;
  b.mark(t++, 1, "start");
  b.free(t++, 1, 0x7000);  // recorded before its allocation
  b.alloc(t++, 1, 0x7000, 64, 3, 2);
  b.alloc(t++, 1, 0x7100, 32, 4);
  b.alloc(t++, 1, 0x7100, 48, 5);  // over a live block: its free was lost
  b.alloc(t++, 3, 0x20000000, 1 << 20, 6);
  b.segment(t++, EventKind::segment_reserve, 2, 0x20000000, 1 << 20);
  b.scope(t++, EventKind::scope_begin, 1);
  for (std::uint32_t k = 0; k < 8; ++k) b.alloc(t++, 2, 0x20000000 + k * 4096, 4096, 7 + k);
  for (std::uint32_t k = 0; k < 8; k += 2) b.free(t++, 2, 0x20000000 + k * 4096);
  b.scope(t++, EventKind::scope_end, 1);
  write_churn(b, t);
  b.mark(t++, 2, "end");
  return b.finish();
}

std::string replaced(std::string text, const std::string& what, const std::string& with) {
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at))
    text.replace(at, what.size(), with), at += with.size();
  return text;
}

void expect_golden(const std::string& name, const std::string& got) {
  const std::string path = std::string(MEMTRAIL_TEST_DIR) + "/golden/" + name;
  if (const char* update = std::getenv("MEMTRAIL_UPDATE_GOLDEN"); update && *update == '1') {
    std::ofstream(path, std::ios::binary) << got;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << path << " missing (MEMTRAIL_UPDATE_GOLDEN=1 writes it)";
  std::stringstream want;
  want << in.rdbuf();
  ASSERT_EQ(got.size(), want.str().size()) << name;
  EXPECT_TRUE(got == want.str()) << name << " differs from " << path;
}

class ReportGolden : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    TraceBuilder b(temp_trace("golden.mtr"));
    path_ = new std::string(write_trace(b));
    AnalysisOptions options;
    options.symbolize = false;
    options.symbol_cache = false;
    options.timeline_points = 40;  // the series' rules, not 2,000 lines of them
    analysis_ = new Analysis(analyze(*path_, options));
  }
  static void TearDownTestSuite() {
    delete analysis_;
    delete path_;
  }
  // The trace's path is the run's own: the files say TRACE.
  static std::string fixed(const std::string& out) { return replaced(out, *path_, "TRACE"); }
  static std::string* path_;
  static Analysis* analysis_;
};

std::string* ReportGolden::path_ = nullptr;
Analysis* ReportGolden::analysis_ = nullptr;

TEST_F(ReportGolden, TheTraceIsWhatTheTestMeans) {
  const Analysis& a = *analysis_;
  ASSERT_TRUE(a.error.empty()) << a.error;
  EXPECT_GT(a.summary.events, 30000u);
  EXPECT_GT(a.sites.size(), 100u);
  EXPECT_EQ(a.summary.replaced_blocks, 1u);
  EXPECT_GT(a.leaks.direct.blocks, 0u);
}

TEST_F(ReportGolden, TextIsByteIdentical) {
  expect_golden("report.txt", fixed(report_text(*analysis_)));
  TextReportOptions all;
  all.top = 40;
  all.stack_depth = 500;
  expect_golden("report-top40.txt", fixed(report_text(*analysis_, all)));
}

TEST_F(ReportGolden, JsonIsByteIdentical) {
  std::ostringstream top10, top40;
  write_report_json(top10, *analysis_, 10);
  write_report_json(top40, *analysis_, 40);
  expect_golden("report.json", fixed(top10.str()));
  expect_golden("report-top40.json", fixed(top40.str()));
}

}  // namespace
}  // namespace memtrail
