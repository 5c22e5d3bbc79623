// Session::series(): min/max envelopes from the index at several zooms,
// against the golden trace of session_trace.hpp.
#include <gtest/gtest.h>

#include "session_test_util.hpp"

namespace memtrail {
namespace {

using test::open_session;
using test::session_options;
using test::TraceBuilder;

const SeriesId kCacheUsed{SeriesKind::pool_used, PoolId{2}};

TEST(SessionSeries, ListsEverySeriesOfTheTrace) {
  TraceBuilder b(test::temp_trace("s-list.mtr"));
  test::write_session_trace(b);
  auto s = open_session(b.finish());
  ASSERT_TRUE(s);
  std::vector<std::string> names;
  for (const SeriesInfo& i : s->series_list()) names.push_back(i.name);
  std::vector<std::string> want = {
      "malloc used",  "cache used", "cache reserved", "cache external fragmentation",
      "process used", "rss",        "heap used",      "heap reserved"};
  EXPECT_EQ(names, want);
}

TEST(SessionSeries, FinestEnvelopeIsExactPerBucket) {
  TraceBuilder b(test::temp_trace("s-fine.mtr"));
  test::write_session_trace(b);
  auto s = open_session(b.finish());
  ASSERT_TRUE(s);
  // Clamped to the trace [100, 900]: 801 ns in 10 buckets of 81 ns.
  Envelope c = s->series(kCacheUsed, 0, 5000, 10);
  EXPECT_EQ(c.t0, 100u);
  EXPECT_EQ(c.t1, 900u);
  EXPECT_EQ(c.step_ns, 81u);
  EXPECT_EQ(c.has_data, (std::vector<std::uint8_t>{0, 0, 1, 1, 1, 1, 1, 1, 1, 1}));
  // 8 points of 64 ns over [256, 768): level 0 is 1 ns wide here.
  Envelope e = s->series(kCacheUsed, 256, 767, 8);
  EXPECT_EQ(e.step_ns, 64u);
  ASSERT_EQ(e.min.size(), 8u);
  EXPECT_EQ(e.has_data, (std::vector<std::uint8_t>{1, 1, 1, 1, 1, 1, 1, 1}));
  // [256,320) from t300: 1024 | [320,384) | [384,448) 1024->1536 |
  // [448,512) ->3584 | [512,576) | [576,640) ->1536 | [640,704) ->512 | 512
  std::vector<std::uint64_t> mn = {1024, 1024, 1024, 1536, 3584, 1536, 512, 512};
  std::vector<std::uint64_t> mx = {1024, 1024, 1536, 3584, 3584, 3584, 1536, 512};
  EXPECT_EQ(e.min, mn);
  EXPECT_EQ(e.max, mx);
  EXPECT_EQ(e.max_of_all, 3584u);
  EXPECT_EQ(e.last, 512u);
  EXPECT_EQ(e.time_ns[3], 448u);
  // The same at 1 ns per point: the value at each nanosecond.
  Envelope ns = s->series(kCacheUsed, 495, 505, 11);
  EXPECT_EQ(ns.max[4], 1536u);
  EXPECT_EQ(ns.max[5], 3584u);
  EXPECT_EQ(ns.min[5], 1536u);  // the bucket of t500 holds the value carried in
  EXPECT_EQ(ns.min[6], 3584u);
}

TEST(SessionSeries, CoarseIndexFoldsLevelsAndCarriesBeyondTheFinest) {
  TraceBuilder b(test::temp_trace("s-coarse.mtr"));
  test::write_session_trace(b);
  SessionOptions o = session_options();
  o.series_buckets = 4;  // level 0: 128 ns buckets over [256, 768)
  auto s = open_session(b.finish(), o);
  ASSERT_TRUE(s);
  // One point over everything: the widest level, exact over the trace.
  Envelope all = s->series(kCacheUsed, 0, kTimeMax, 1);
  ASSERT_EQ(all.min.size(), 1u);
  EXPECT_EQ(all.min[0], 512u);
  EXPECT_EQ(all.max[0], 3584u);
  // Two points: [100,501) and [501,902) at level 1 (256 ns buckets
  // [256,512) and [512,768), the first also holding 300..500).
  Envelope two = s->series(kCacheUsed, 100, 900, 2);
  EXPECT_EQ(two.min, (std::vector<std::uint64_t>{1024, 512}));
  EXPECT_EQ(two.max, (std::vector<std::uint64_t>{3584, 3584}));
  // Finer than the finest level: each point carries its 128 ns bucket.
  Envelope fine = s->series(kCacheUsed, 300, 700, 401);
  EXPECT_EQ(fine.step_ns, 1u);
  EXPECT_EQ(fine.min[0], 1024u);  // t300: bucket [256,384)
  EXPECT_EQ(fine.max[0], 1024u);
  EXPECT_EQ(fine.min[150], 1024u);  // t450: bucket [384,512) 1024 -> 1536 -> 3584
  EXPECT_EQ(fine.max[150], 3584u);
  EXPECT_EQ(fine.min[400], 512u);  // t700: bucket [640,768) 1536 -> 512
  EXPECT_EQ(fine.max[400], 1536u);
}

TEST(SessionSeries, ReservedProcessAndSamples) {
  TraceBuilder b(test::temp_trace("s-other.mtr"));
  test::write_session_trace(b);
  auto s = open_session(b.finish());
  ASSERT_TRUE(s);
  Envelope r = s->series({SeriesKind::pool_reserved, PoolId{2}}, 100, 900, 1);
  EXPECT_EQ(r.min[0], 4096u);
  EXPECT_EQ(r.max[0], 6144u);
  EXPECT_EQ(r.last, 4096u);
  // Process used: malloc 100 + cache; peak 100 + 3584 at t500.
  Envelope p = s->series({SeriesKind::process_used, {}}, 100, 900, 1);
  EXPECT_EQ(p.max[0], 3684u);
  EXPECT_EQ(p.min[0], 100u);
  Envelope h = s->series({SeriesKind::heap_reserved, {}}, 100, 900, 4);
  EXPECT_EQ(h.has_data, (std::vector<std::uint8_t>{1, 1, 1, 1}));
  EXPECT_EQ(h.max_of_all, 5000u);
  // Empty answers: inverted range, no points, unknown pool.
  EXPECT_TRUE(s->series(kCacheUsed, 500, 400, 10).min.empty());
  EXPECT_TRUE(s->series(kCacheUsed, 100, 900, 0).min.empty());
  EXPECT_TRUE(s->series({SeriesKind::pool_used, PoolId{9}}, 100, 900, 10).min.empty());
}

TEST(SessionSeries, OneHeapIsTheProcess) {
  TraceBuilder b(test::temp_trace("s-one.mtr"));
  b.pool(1, "malloc", PoolKind::heap);
  for (std::uint32_t i = 1; i <= 3; ++i) b.stack(i, 0, 0x1000 * i);
  test::write_heap_events(b);  // used 100, 300, 200, 250, 200, 0, 300
  auto s = open_session(b.finish());
  ASSERT_TRUE(s);
  Envelope p = s->series({SeriesKind::process_used, {}}, 10, 70, 3);
  Envelope h = s->series({SeriesKind::pool_used, PoolId{1}}, 10, 70, 3);
  EXPECT_EQ(p.min, h.min);
  EXPECT_EQ(p.max, h.max);
  EXPECT_EQ(p.max_of_all, 300u);
  EXPECT_EQ(p.last, 300u);
  // 21 ns points folded from 4 ns buckets: [10,31) 100..300 | [31,52)
  // 200..250, and 300 from the bucket [28,32) it starts in | [52,73) 0..300
  EXPECT_EQ(p.min, (std::vector<std::uint64_t>{100, 200, 0}));
  EXPECT_EQ(p.max, (std::vector<std::uint64_t>{300, 300, 300}));
}

}  // namespace
}  // namespace memtrail
