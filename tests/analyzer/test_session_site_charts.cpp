// Session::site_charts (memtrail/site_charts.hpp): each top site's consumed
// bytes, allocations and temporary allocations per time bucket, on the
// heap events of trace_builder.hpp whose every value is known, for the whole
// trace and a range; and on 10^5 distinct stacks, where every allocation
// lands in exactly one series.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "cli_runner.hpp"
#include "session_test_util.hpp"

namespace memtrail {
namespace {

using test::open_session;
using test::TraceBuilder;
using Values = std::vector<std::uint64_t>;

// write_heap_events with three distinct one-frame stacks (1, 2, 3).
std::string heap_trace(TraceBuilder& b) {
  b.pool(1, "heap", PoolKind::heap);
  b.stack(1, 0, 0x1000);
  b.stack(2, 0, 0x2000);
  b.stack(3, 0, 0x3000);
  test::write_heap_events(b);
  return b.finish();
}

// The recorded stack of each charted series (0 for "other").
std::vector<std::uint32_t> stacks_of(const SiteCharts& c, const Analysis& a) {
  std::vector<std::uint32_t> out;
  for (const SiteSeries& s : c.series) out.push_back(s.other ? 0 : at(a.sites, s.site).stack.value);
  return out;
}

SiteCharts chart(const Session& s, const Analysis& a, ChartCost cost, std::size_t top,
                 std::uint64_t t0 = 0, std::uint64_t t1 = kTimeMax) {
  SiteChartRequest r;
  r.cost = cost;
  r.top = top;
  r.buckets = 3;
  r.t0 = t0;
  r.t1 = t1;
  SiteCharts c = s.site_charts(r, a);
  EXPECT_TRUE(c.error.empty()) << c.error;
  return c;
}

// Chosen sites (the GUI's filter) are charted in the order given, each as
// it is among the top sites; "other" holds the rest, and no site at all
// leaves "other" the total.
TEST(SiteCharts, ChosenSitesAreChartedInTheirOrder) {
  TraceBuilder b(test::temp_trace("site-charts-chosen.mtr"));
  auto s = open_session(heap_trace(b));
  ASSERT_TRUE(s);
  const Analysis& a = s->whole();
  SiteCharts all = chart(*s, a, ChartCost::allocations, 250);
  ASSERT_EQ(all.series.size(), 4u);  // three sites and other
  SiteChartRequest r;
  r.cost = ChartCost::allocations;
  r.buckets = 3;
  r.sites = std::vector<SiteId>{all.series[2].site, all.series[0].site};
  SiteCharts c = s->site_charts(r, a);
  ASSERT_TRUE(c.error.empty()) << c.error;
  ASSERT_EQ(c.series.size(), 3u);
  EXPECT_EQ(c.series[0].site, all.series[2].site);
  EXPECT_EQ(c.series[0].value, all.series[2].value);
  EXPECT_EQ(c.series[1].value, all.series[0].value);
  EXPECT_TRUE(c.series[2].other);
  EXPECT_EQ(c.series[2].value, all.series[1].value);  // the one left out
  r.sites = std::vector<SiteId>{};
  SiteCharts none = s->site_charts(r, a);
  ASSERT_EQ(none.series.size(), 1u);
  Values total(3, 0);
  for (const SiteSeries& x : all.series)
    for (std::size_t i = 0; i < 3; ++i) total[i] += x.value[i];
  EXPECT_EQ(none.series[0].value, total);
}

// Buckets [10, 31), [31, 52), [52, 73): values at 30, 51 and 70.
TEST(SiteCharts, ConsumedIsEachTopSitesLiveBytesAtEachBucketsEnd) {
  TraceBuilder b(test::temp_trace("site-charts-consumed.mtr"));
  auto s = open_session(heap_trace(b));
  ASSERT_TRUE(s);
  // By peak bytes: stack 2 held 200 at the peak, stack 1 100, stack 3 none.
  SiteCharts c = chart(*s, s->whole(), ChartCost::consumed, 1);
  EXPECT_EQ(c.time_ns, (Values{10, 31, 52}));
  EXPECT_EQ(c.step_ns, 21u);
  ASSERT_EQ(stacks_of(c, s->whole()), (std::vector<std::uint32_t>{2, 0}));
  EXPECT_EQ(c.series[0].value, (Values{200, 200, 0}));  // B, freed at 60
  EXPECT_EQ(c.series[1].value, (Values{0, 0, 300}));    // A freed at 30; D from 70
}

TEST(SiteCharts, AllocationsAndTemporariesAreCumulativeCounts) {
  TraceBuilder b(test::temp_trace("site-charts-counts.mtr"));
  auto s = open_session(heap_trace(b));
  ASSERT_TRUE(s);
  SiteCharts c = chart(*s, s->whole(), ChartCost::allocations, 2);
  ASSERT_EQ(stacks_of(c, s->whole()), (std::vector<std::uint32_t>{1, 2, 0}));
  EXPECT_EQ(c.series[0].value, (Values{1, 2, 2}));  // A at 10, C at 40
  EXPECT_EQ(c.series[1].value, (Values{1, 1, 1}));
  EXPECT_EQ(c.series[2].value, (Values{0, 0, 1}));  // D at 70
  c = chart(*s, s->whole(), ChartCost::temporary, 10);
  ASSERT_EQ(stacks_of(c, s->whole()), (std::vector<std::uint32_t>{1, 0}));
  EXPECT_EQ(c.series[0].value, (Values{0, 1, 1}));  // C, freed at 50
  EXPECT_EQ(c.series[1].value, (Values{0, 0, 0}));
}

// [35, 70] in buckets [35, 47), [47, 59), [59, 71): sites ranked in the
// range's Analysis; live bytes carry in from before it, counts do not.
TEST(SiteCharts, ARangeRanksItsOwnSitesAndCountsOnlyInside) {
  TraceBuilder b(test::temp_trace("site-charts-range.mtr"));
  auto s = open_session(heap_trace(b));
  ASSERT_TRUE(s);
  auto range = s->analyze_range(35, 70);
  ASSERT_TRUE(range->error.empty()) << range->error;
  SiteCharts c = chart(*s, *range, ChartCost::allocations, 10, 35, 70);
  EXPECT_EQ(c.time_ns, (Values{35, 47, 59}));
  ASSERT_EQ(stacks_of(c, *range), (std::vector<std::uint32_t>{1, 3, 0}));
  EXPECT_EQ(c.series[0].value, (Values{1, 1, 1}));  // C at 40; A was before
  EXPECT_EQ(c.series[1].value, (Values{0, 0, 1}));
  EXPECT_EQ(c.series[2].value, (Values{0, 0, 0}));  // B: no allocation inside
  c = chart(*s, *range, ChartCost::consumed, 10, 35, 70);
  // Peak of the range: 300 at 70 (D alone), the first time it is reached.
  ASSERT_EQ(stacks_of(c, *range), (std::vector<std::uint32_t>{3, 0}));
  EXPECT_EQ(c.series[0].value, (Values{0, 0, 300}));
  EXPECT_EQ(c.series[1].value, (Values{250, 200, 0}));  // B and C (40-50), then B
}

// Events are in file order: a thread's buffer may land after a later time.
// An allocation at t5 recorded after t30 (before the file's first time, as
// the session sees it) counts as report counts it, in the first bucket, and
// is live at the end.
TEST(SiteCharts, AnEventOutsideTheFilesFirstAndLastTimesIsCharted) {
  TraceBuilder b(test::temp_trace("site-charts-order.mtr"));
  b.pool(1, "heap", PoolKind::heap);
  b.stack(1, 0, 0x1000);
  b.stack(2, 0, 0x2000);
  b.stack(3, 0, 0x3000);
  b.alloc(10, 1, 0xA0, 100, 1);
  b.alloc(20, 1, 0xB0, 200, 2);
  b.free(30, 1, 0xA0);
  b.alloc(5, 1, 0xE0, 10, 1, 2);  // thread 2's buffer, written late
  b.alloc(40, 1, 0xC0, 50, 1);
  b.free(50, 1, 0xC0);
  b.free(60, 1, 0xB0);
  b.alloc(70, 1, 0xD0, 300, 3);
  auto s = open_session(b.finish());
  ASSERT_TRUE(s);
  const Site& a_site = s->whole().sites[0];
  ASSERT_EQ(a_site.stack.value, 1u);
  ASSERT_EQ(a_site.calls, 3u);
  SiteCharts c = chart(*s, s->whole(), ChartCost::allocations, 1);
  ASSERT_EQ(stacks_of(c, s->whole()), (std::vector<std::uint32_t>{1, 0}));
  EXPECT_EQ(c.series[0].value.back(), 3u);
  EXPECT_EQ(c.series[1].value.back(), 2u);
  c = chart(*s, s->whole(), ChartCost::consumed, 10);
  std::uint64_t live = 0;
  for (const SiteSeries& series : c.series) live += series.value.back();
  EXPECT_EQ(live, 310u);  // D and the late block
}

// 10^5 stacks of one allocation each: the top 10 and "other" together hold
// every allocation, in every bucket, and the last bucket equals the sites'.
TEST(SiteCharts, EveryAllocationOfManyDistinctStacksIsInOneSeries) {
  TraceBuilder b(test::temp_trace("site-charts-many.mtr"));
  b.pool(1, "heap", PoolKind::heap);
  constexpr std::uint32_t kStacks = 100000;
  for (std::uint32_t i = 1; i <= kStacks; ++i) b.stack(i, 0, 0x100000 + 16 * i);
  std::uint64_t t = 0;
  for (std::uint32_t i = 1; i <= kStacks; ++i)
    for (std::uint32_t k = 0; k < (i % 50 == 0 ? 3u : 1u); ++k) {
      t += 10;
      b.alloc(t, 1, 0x10000000 + 64 * t, 16, i);
    }
  auto s = open_session(b.finish());
  ASSERT_TRUE(s);
  const Analysis& a = s->whole();
  SiteChartRequest r;
  r.cost = ChartCost::allocations;
  r.buckets = 100;
  SiteCharts c = s->site_charts(r, a);
  ASSERT_TRUE(c.error.empty()) << c.error;
  ASSERT_EQ(c.series.size(), 11u);
  std::uint64_t total = 0;
  for (const SiteSeries& series : c.series) {
    total += series.value.back();
    if (!series.other) {
      EXPECT_EQ(series.value.back(), at(a.sites, series.site).calls);
      EXPECT_EQ(series.value.back(), 3u);
    }
  }
  EXPECT_EQ(total, a.summary.allocations);
  for (std::size_t i = 0; i < c.time_ns.size(); ++i) {
    std::uint64_t sum = 0;
    for (const SiteSeries& series : c.series) sum += series.value[i];
    // Allocations are 10 ns apart from t = 10: those before the bucket's end.
    const std::uint64_t end = c.time_ns[i] + c.step_ns;
    EXPECT_EQ(sum, std::min<std::uint64_t>((end - 1) / 10, a.summary.allocations)) << i;
  }
}

// The CLI face: `export --format charts` prints what Session::site_charts
// computes, takes the range options, and says what is wrong with its own.
TEST(SiteCharts, ExportFormatChartsPrintsTheSeries) {
  TraceBuilder b(test::temp_trace("site-charts-cli.mtr"));
  const std::string& path = heap_trace(b);
  auto r =
      test::memtrail("export " + path + " --format charts --cost allocations --top 2 --points 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["cost"], "allocations");
  EXPECT_EQ(j["time_ns"], (Values{10, 31, 52}));
  ASSERT_EQ(j["series"].size(), 3u);
  EXPECT_EQ(j["series"][0]["value"], (Values{1, 2, 2}));
  EXPECT_EQ(j["series"][1]["value"], (Values{1, 1, 1}));
  EXPECT_TRUE(j["series"][2]["site"].is_null());
  EXPECT_EQ(j["series"][2]["value"], (Values{0, 0, 1}));
  auto ranged = test::memtrail("export " + path + " --format charts --from 35 --to 70 --points 3");
  ASSERT_EQ(ranged.exit_code, 0) << ranged.err;
  EXPECT_EQ(nlohmann::json::parse(ranged.out)["time_ns"], (Values{35, 47, 59}));
  auto bad = test::memtrail("export " + path + " --format charts --cost bytes");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("consumed, allocations or temporary"), std::string::npos) << bad.err;
  bad = test::memtrail("export " + path + " --format charts --points 0");
  EXPECT_EQ(bad.exit_code, 2);
}

}  // namespace
}  // namespace memtrail
