// Growth per iteration of scopes and of iteration marks, with the sites that
// grow: exact numbers on synthetic traces, the report text and JSON, and
// `memtrail check --max-scope-growth` (exit 1 on growth, 2 on a bad size).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "memtrail/analysis.hpp"
#include "memtrail/check.hpp"
#include "memtrail/report_json.hpp"
#include "memtrail/report_text.hpp"
#include "trace_builder.hpp"

namespace memtrail {
namespace {

using test::temp_trace;
using test::TraceBuilder;

constexpr std::uint32_t kPool = 1;

// A tidy-like loop of `entries` entries of scope 1 ("step"): each entry
// allocates 100 B from stack 2 (freed inside) and one 48 B block from stack
// 1, which is freed after the entry unless `leak`.
void write_loop(TraceBuilder& b, int entries, bool leak) {
  b.pool(kPool, "tensors", PoolKind::tidy);
  b.stack(1, 0, 0x1000);
  b.stack(2, 0, 0x2000);
  b.writer().add_scope(ScopeInfo{1, "step", ScopeKind::tidy, kPool});
  std::uint64_t t = 1000;
  for (int i = 0; i < entries; ++i) {
    const std::uint64_t kept = 0x10000 + 0x100 * i;
    b.scope(t++, EventKind::scope_begin, 1);
    b.alloc(t++, kPool, 0x5000, 100, 2);
    b.alloc(t++, kPool, kept, 48, 1);
    b.free(t++, kPool, 0x5000);
    b.scope(t++, EventKind::scope_end, 1);
    if (!leak) b.free(t++, kPool, kept);
  }
}

const ScopeStats* scope_named(const Analysis& a, const std::string& name) {
  for (const ScopeStats& s : a.scopes)
    if (s.info.name == name) return &s;
  return nullptr;
}

TEST(ScopeGrowth, ALeakingLoopGrowsByTheLeakedBlockAtItsSite) {
  TraceBuilder b(temp_trace("growth-leak.mtr"));
  write_loop(b, 5, true);
  Analysis a = analyze(b.finish());
  ASSERT_TRUE(a.error.empty()) << a.error;
  const ScopeStats* s = scope_named(a, "step");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->entries, 5u);
  EXPECT_EQ(s->bytes_escaped, 240u);
  EXPECT_DOUBLE_EQ(s->growth_per_entry_bytes, 48.0);
  ASSERT_EQ(s->growth_sites.size(), 1u);
  EXPECT_DOUBLE_EQ(s->growth_sites[0].bytes_per_entry, 48.0);
  EXPECT_EQ(s->growth_sites[0].live_bytes, 240u);
  EXPECT_EQ(at(a.sites, s->growth_sites[0].site).stack.value, 1u);
  const std::string text = report_text(a);
  EXPECT_NE(text.find("scope 'step' grows 48 bytes per iteration (tidy, 5 entries)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("+48 bytes per iteration from this site (240 B live"), std::string::npos)
      << text;
  auto j = to_report_json(a);
  ASSERT_EQ(j["scopes"][0]["growth_sites"].size(), 1u);
  EXPECT_EQ(j["scopes"][0]["growth_sites"][0]["bytes_per_entry"], 48.0);
  EXPECT_EQ(j["scopes"][0]["growth_sites"][0]["live_bytes"], 240);
}

TEST(ScopeGrowth, ASteadyLoopEscapesButDoesNotGrow) {
  TraceBuilder b(temp_trace("growth-steady.mtr"));
  write_loop(b, 5, false);
  Analysis a = analyze(b.finish());
  const ScopeStats* s = scope_named(a, "step");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->bytes_escaped, 240u);          // each entry's 48 B outlive it...
  EXPECT_EQ(s->growth_per_entry_bytes, 0.0);  // ...and are freed before the next
  EXPECT_TRUE(s->growth_sites.empty());
  EXPECT_EQ(report_text(a).find("grows"), std::string::npos);
}

TEST(ScopeGrowth, LateGrowthCountsFromTheFirstEntry) {
  // A site that starts leaking at entry 3 of 5: 3 blocks more between the
  // ends of entry 1 and entry 5, 3/4 of a block per entry.
  TraceBuilder b(temp_trace("growth-late.mtr"));
  b.pool(kPool, "tensors", PoolKind::tidy);
  b.stack(1, 0, 0x1000);
  b.writer().add_scope(ScopeInfo{1, "step", ScopeKind::tidy, kPool});
  std::uint64_t t = 10;
  for (int i = 0; i < 5; ++i) {
    b.scope(t++, EventKind::scope_begin, 1);
    if (i >= 2) b.alloc(t++, kPool, 0x9000 + 0x100 * i, 64, 1);
    b.scope(t++, EventKind::scope_end, 1);
  }
  Analysis a = analyze(b.finish());
  const ScopeStats* s = scope_named(a, "step");
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->growth_sites.size(), 1u);
  EXPECT_DOUBLE_EQ(s->growth_sites[0].bytes_per_entry, 48.0);  // 192 B over 4 entries
  EXPECT_EQ(s->growth_sites[0].live_bytes, 192u);
}

// Marks "iter" as the only structure: 6 marks, 5 iterations, 64 B kept and
// a 32 B temporary per iteration.
void write_marked_loop(TraceBuilder& b) {
  b.pool(kPool, "malloc", PoolKind::heap);
  b.stack(1, 0, 0x1000);
  b.stack(2, 0, 0x2000);
  std::uint64_t t = 100;
  for (int i = 0; i < 6; ++i) {
    b.mark(t++, 7, "iter");
    if (i == 5) break;
    b.alloc(t++, kPool, 0x7000, 32, 2);
    b.alloc(t++, kPool, 0x20000 + 0x100 * i, 64, 1);
    b.free(t++, kPool, 0x7000);
  }
}

TEST(ScopeGrowth, IterationMarksMakeALoopOfAnUnmodifiedProgram) {
  TraceBuilder b(temp_trace("growth-marks.mtr"));
  write_marked_loop(b);
  const std::string path = b.finish();
  EXPECT_EQ(scope_named(analyze(path), "iter"), nullptr);  // only with the option
  AnalysisOptions o;
  o.iteration_mark = "iter";
  Analysis a = analyze(path, o);
  ASSERT_TRUE(a.error.empty()) << a.error;
  const ScopeStats* s = scope_named(a, "iter");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->info.kind, ScopeKind::iteration);
  EXPECT_EQ(s->entries, 5u);
  EXPECT_EQ(s->bytes_escaped, 320u);
  EXPECT_EQ(s->live_bytes_at_end, 320u);
  EXPECT_DOUBLE_EQ(s->growth_per_entry_bytes, 64.0);
  ASSERT_EQ(s->growth_sites.size(), 1u);
  EXPECT_EQ(at(a.sites, s->growth_sites[0].site).stack.value, 1u);
  EXPECT_EQ(a.marks.size(), 6u);  // still marks too

  o.iteration_mark = "nope";
  EXPECT_NE(analyze(path, o).error.find("iteration mark 'nope' not found"), std::string::npos);
}

TEST(ScopeGrowth, CheckFailsOnGrowthAndPassesASteadyLoop) {
  TraceBuilder leak(temp_trace("check-leak.mtr")), steady(temp_trace("check-steady.mtr"));
  write_loop(leak, 5, true);
  write_loop(steady, 5, false);
  leak.finish();
  steady.finish();
  CheckConfig config;
  config.max_scope_growth = 0;
  SuppressionSet none;
  CheckResult r = run_check(analyze(leak.path()), config, none, nullptr);
  ASSERT_EQ(r.items.size(), 1u);  // only the growth limit: leaks are not checked
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.items[0].name, "scope-growth");
  EXPECT_NE(r.items[0].details.find("scope 'step' grows 48 bytes per iteration over 5 entries"),
            std::string::npos)
      << r.items[0].details;
  config.max_scope_growth = 48;
  EXPECT_TRUE(run_check(analyze(leak.path()), config, none, nullptr).passed());
  config.max_scope_growth = 0;
  EXPECT_TRUE(run_check(analyze(steady.path()), config, none, nullptr).passed());

  auto failed = test::memtrail("check " + test::shell_quote(leak.path()) + " --max-scope-growth 0");
  EXPECT_EQ(failed.exit_code, 1) << failed.out << failed.err;
  // A failed check prints its verdicts on stderr.
  EXPECT_NE(failed.err.find("grows 48 bytes per iteration"), std::string::npos) << failed.err;
  auto passed =
      test::memtrail("check " + test::shell_quote(steady.path()) + " --max-scope-growth 0");
  EXPECT_EQ(passed.exit_code, 0) << passed.out << passed.err;
}

TEST(ScopeGrowth, PolicyFileSetsTheLimit) {
  const std::string path = temp_trace("growth-policy.json");
  CheckConfig config;
  std::string error;
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("{\"max_scope_growth\": \"1 KiB\"}", f);
    std::fclose(f);
  }
  EXPECT_TRUE(load_policy(path, config, &error)) << error;
  EXPECT_EQ(config.max_scope_growth, 1024u);
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fputs("{\"max_scope_growth\": \"lots\"}", f);
    std::fclose(f);
  }
  EXPECT_FALSE(load_policy(path, config, &error));
  EXPECT_NE(error.find("max_scope_growth"), std::string::npos) << error;
  std::remove(path.c_str());
}

TEST(ScopeGrowth, BadFlagsAreUsageErrors) {
  TraceBuilder b(temp_trace("check-bad.mtr"));
  write_marked_loop(b);
  const std::string path = test::shell_quote(b.finish());
  auto bad_size = test::memtrail("check " + path + " --max-scope-growth lots");
  EXPECT_EQ(bad_size.exit_code, 2);
  EXPECT_NE(bad_size.err.find("--max-scope-growth"), std::string::npos) << bad_size.err;
  auto empty_mark = test::memtrail("report " + path + " --iteration-mark=");
  EXPECT_EQ(empty_mark.exit_code, 2);
  EXPECT_NE(empty_mark.err.find("--iteration-mark"), std::string::npos) << empty_mark.err;
  auto missing = test::memtrail("report " + path + " --iteration-mark nope");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("iteration mark 'nope' not found"), std::string::npos) << missing.err;
  auto marked = test::memtrail("check " + path + " --iteration-mark iter --max-scope-growth 63");
  EXPECT_EQ(marked.exit_code, 1) << marked.out;
}

}  // namespace
}  // namespace memtrail
