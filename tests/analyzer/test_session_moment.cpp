// Session answers at a moment (segment map, breakdown, OOM explanation) and
// over a range (largest blocks, scope entries, ranged analysis), against the
// golden trace of session_trace.hpp.
#include <gtest/gtest.h>

#include "memtrail/report_json.hpp"
#include "session_test_util.hpp"

namespace memtrail {
namespace {

using test::open_session;
using test::TraceBuilder;

struct Span {
  std::uint64_t address, size;
  SpanState state;
  bool operator==(const Span&) const = default;
};

std::vector<Span> spans_of(const SegmentInfo& s) {
  std::vector<Span> out;
  for (const SegmentSpan& x : segment_spans(s)) out.push_back({x.address, x.size, x.state});
  return out;
}

constexpr auto kA = SpanState::allocated;
constexpr auto kSplit = SpanState::inactive_split;
constexpr auto kCached = SpanState::cached_free;

void expect_same_map(const SegmentMap& a, const SegmentMap& b) {
  ASSERT_EQ(a.segments.size(), b.segments.size());
  for (std::size_t i = 0; i < a.segments.size(); ++i) {
    EXPECT_EQ(a.segments[i].address, b.segments[i].address);
    EXPECT_EQ(a.segments[i].size, b.segments[i].size);
    ASSERT_EQ(a.segments[i].blocks.size(), b.segments[i].blocks.size());
    for (std::size_t k = 0; k < a.segments[i].blocks.size(); ++k) {
      EXPECT_EQ(a.segments[i].blocks[k].address, b.segments[i].blocks[k].address);
      EXPECT_EQ(a.segments[i].blocks[k].size, b.segments[i].blocks[k].size);
      EXPECT_EQ(a.segments[i].blocks[k].stack, b.segments[i].blocks[k].stack);
      EXPECT_EQ(a.segments[i].blocks[k].alloc_ns, b.segments[i].blocks[k].alloc_ns);
    }
  }
  EXPECT_EQ(a.pool_state.final_used_bytes, b.pool_state.final_used_bytes);
  EXPECT_EQ(a.pool_state.final_reserved_bytes, b.pool_state.final_reserved_bytes);
  EXPECT_EQ(a.fragmentation.free_bytes, b.fragmentation.free_bytes);
  EXPECT_EQ(a.fragmentation.largest_free_block, b.fragmentation.largest_free_block);
}

TEST(SessionMoment, SegmentMapBeforeInsideAndAfterEvents) {
  TraceBuilder b(test::temp_trace("m-map.mtr"));
  test::write_session_trace(b);
  auto s = open_session(b.finish());
  ASSERT_TRUE(s);
  for (std::uint64_t t : {50, 100, 299, 300, 450, 500, 650, 800, 900, 5000})
    expect_same_map(s->segment_map(PoolId{2}, t), segment_map_at(b.path(), PoolId{2}, t));

  SegmentMap before = s->segment_map(PoolId{2}, 99);
  EXPECT_TRUE(before.error.empty()) << before.error;
  EXPECT_TRUE(before.segments.empty());

  SegmentMap m = s->segment_map(PoolId{2}, 450);
  ASSERT_EQ(m.segments.size(), 2u);
  EXPECT_EQ(
      spans_of(m.segments[0]),
      (std::vector<Span>{
          {0x1000, 1024, kA}, {0x1400, 1024, kSplit}, {0x1800, 512, kA}, {0x1a00, 1536, kSplit}}));
  EXPECT_EQ(spans_of(m.segments[1]), (std::vector<Span>{{0x10000, 2048, kCached}}));
  EXPECT_EQ(segment_spans(m.segments[0])[2].stack.value, 2u);
  EXPECT_EQ(segment_spans(m.segments[0])[2].alloc_ns, 400u);

  SegmentMap after = s->segment_map(PoolId{2}, 950);
  ASSERT_EQ(after.segments.size(), 1u);
  EXPECT_EQ(spans_of(after.segments[0]),
            (std::vector<Span>{{0x1000, 2048, kSplit}, {0x1800, 512, kA}, {0x1a00, 1536, kSplit}}));
  EXPECT_FALSE(s->segment_map(PoolId{9}, 450).error.empty());
}

TEST(SessionMoment, AdjacentMappedSegmentsSpanAsOne) {
  TraceBuilder b(test::temp_trace("m-mapped.mtr"));
  b.pool(2, "cache", PoolKind::caching);
  b.segment(10, EventKind::segment_reserve, 2, 0x1000, 0x1000, SegmentDetail::map);
  b.segment(20, EventKind::segment_reserve, 2, 0x2000, 0x1000, SegmentDetail::map);
  b.alloc(30, 2, 0x1000, 0x100);
  auto s = open_session(b.finish());
  ASSERT_TRUE(s);
  SegmentMap m = s->segment_map(PoolId{2}, 30);
  ASSERT_EQ(m.segments.size(), 1u);
  // The second page holds no block but is part of a reservation that does:
  // inactive split, as compute_fragmentation counts it, not cached free.
  EXPECT_EQ(spans_of(m.segments[0]),
            (std::vector<Span>{{0x1000, 0x100, kA}, {0x1100, 0x1f00, kSplit}}));
  auto bd = s->breakdown(30);
  ASSERT_EQ(bd.size(), 1u);
  EXPECT_EQ(bd[0].fragmented, 0x1f00u);
  EXPECT_EQ(bd[0].cached_free, 0u);
}

TEST(SessionMoment, BreakdownSplitsReservedBytes) {
  TraceBuilder b(test::temp_trace("m-breakdown.mtr"));
  test::write_session_trace(b);
  auto s = open_session(b.finish());
  ASSERT_TRUE(s);
  auto at450 = s->breakdown(450);
  ASSERT_EQ(at450.size(), 2u);
  const PoolBreakdown& heap = at450[0];
  EXPECT_EQ(heap.name, "malloc");
  EXPECT_EQ(heap.source, PoolBreakdown::Source::heap_samples);
  EXPECT_EQ(heap.used, 100u);
  EXPECT_EQ(heap.reserved, 5000u);
  EXPECT_EQ(heap.fragmented, 4900u);
  EXPECT_EQ(heap.cached_free, 0u);
  const PoolBreakdown& cache = at450[1];
  EXPECT_EQ(cache.source, PoolBreakdown::Source::segments);
  EXPECT_EQ(cache.reserved, 6144u);
  EXPECT_EQ(cache.used, 1536u);
  EXPECT_EQ(cache.fragmented, 2560u);
  EXPECT_EQ(cache.cached_free, 2048u);

  auto at950 = s->breakdown(950);
  EXPECT_EQ(at950[1].reserved, 4096u);
  EXPECT_EQ(at950[1].used, 512u);
  EXPECT_EQ(at950[1].fragmented, 3584u);
  EXPECT_EQ(at950[1].cached_free, 0u);
  // Before the first sample the heap's reserved bytes are unknown.
  auto at120 = s->breakdown(120);
  EXPECT_EQ(at120[0].source, PoolBreakdown::Source::none);
  EXPECT_EQ(at120[1].reserved, 4096u);
  EXPECT_EQ(at120[1].cached_free, 4096u);
}

TEST(SessionMoment, ExplainsTheOomEvent) {
  TraceBuilder b(test::temp_trace("m-oom.mtr"));
  test::write_session_trace(b);
  auto s = open_session(b.finish());
  ASSERT_TRUE(s);
  ASSERT_EQ(s->ooms().size(), 1u);
  EXPECT_EQ(s->ooms()[0].time_ns, 800u);
  EXPECT_EQ(s->ooms()[0].requested, 3000u);
  EXPECT_EQ(s->ooms()[0].message, "{\"pool\":\"cache\"}");
  OomExplanation x = s->explain(800);
  EXPECT_TRUE(x.error.empty()) << x.error;
  EXPECT_EQ(x.requested, 3000u);
  ASSERT_EQ(x.pools.size(), 1u);
  const auto& p = x.pools[0];
  EXPECT_EQ(p.name, "cache");
  EXPECT_EQ(p.reserved, 6144u);
  EXPECT_EQ(p.used, 512u);
  EXPECT_EQ(p.free, 5632u);
  EXPECT_EQ(p.largest_free, 2048u);
  EXPECT_FALSE(p.request_fits);
  ASSERT_EQ(p.pinned.size(), 1u);  // B is empty: cached, pins nothing
  EXPECT_EQ(p.pinned[0].segment.address, 0x1000u);
  EXPECT_EQ(p.pinned[0].free_bytes, 3584u);
  EXPECT_EQ(p.pinned[0].largest_free, 2048u);
  ASSERT_EQ(p.pinned[0].segment.blocks.size(), 1u);
  EXPECT_EQ(p.pinned[0].segment.blocks[0].stack.value, 2u);
  // At another moment, with a request that fits.
  OomExplanation y = s->explain(450, 2048);
  EXPECT_EQ(y.requested, 2048u);
  EXPECT_TRUE(y.pools[0].request_fits);
  EXPECT_EQ(s->explain(450).requested, 0u);
}

TEST(SessionRange, LargestBlocksOverlappingARange) {
  TraceBuilder b(test::temp_trace("r-blocks.mtr"));
  test::write_session_trace(b);
  auto s = open_session(b.finish());
  ASSERT_TRUE(s);
  // Blocks of any size (the pass keeps the largest per time slice), by alloc time.
  auto early = s->largest_blocks(0, 450, 10);
  ASSERT_EQ(early.size(), 3u);
  EXPECT_EQ(early[0].size, 100u);  // malloc, live at the end
  EXPECT_EQ(early[0].free_ns, kTimeMax);
  EXPECT_EQ(early[1].size, 1024u);
  EXPECT_EQ(early[1].free_ns, 700u);
  EXPECT_EQ(early[2].size, 512u);
  auto top2 = s->largest_blocks(0, 450, 2);
  ASSERT_EQ(top2.size(), 2u);
  EXPECT_EQ(top2[0].size, 1024u);
  EXPECT_EQ(top2[1].size, 512u);
  auto one = s->largest_blocks(0, kTimeMax, 1);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].size, 2048u);
  auto all = s->largest_blocks(550, 1000, 10);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].alloc_ns, 250u);
  EXPECT_EQ(all[1].alloc_ns, 300u);
  EXPECT_EQ(all[2].alloc_ns, 400u);
  EXPECT_EQ(all[3].alloc_ns, 500u);
  auto late = s->largest_blocks(750, 1000, 10);  // the two live at the end
  ASSERT_EQ(late.size(), 2u);
  EXPECT_EQ(late[0].size, 100u);
  EXPECT_EQ(late[1].size, 512u);
}

TEST(SessionRange, ScopeIntervalsNest) {
  TraceBuilder b(test::temp_trace("r-scopes.mtr"));
  test::write_session_trace(b);
  auto s = open_session(b.finish());
  ASSERT_TRUE(s);
  auto all = s->scope_intervals(0, kTimeMax, 10);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].scope, 1u);
  EXPECT_EQ(all[0].begin_ns, 110u);
  EXPECT_EQ(all[0].end_ns, 820u);
  EXPECT_EQ(all[0].depth, 0u);
  EXPECT_EQ(all[1].scope, 2u);
  EXPECT_EQ(all[1].begin_ns, 120u);
  EXPECT_EQ(all[1].end_ns, 130u);
  EXPECT_EQ(all[1].depth, 1u);
  EXPECT_EQ(all[2].begin_ns, 850u);
  EXPECT_EQ(all[2].end_ns, kTimeMax);
  EXPECT_EQ(all[2].depth, 0u);
  auto late = s->scope_intervals(140, 860, 10);
  ASSERT_EQ(late.size(), 2u);
  EXPECT_EQ(late[0].begin_ns, 110u);
  EXPECT_EQ(late[1].begin_ns, 850u);
  EXPECT_EQ(s->scope_intervals(0, kTimeMax, 1).size(), 1u);
}

TEST(SessionRange, AnalyzeRangeEqualsAnalyzeWithTheSameRange) {
  TraceBuilder b(test::temp_trace("r-analyze.mtr"));
  test::write_session_trace(b);
  auto s = open_session(b.finish());
  ASSERT_TRUE(s);
  auto r = s->analyze_range(300, 600);
  ASSERT_TRUE(r && r->error.empty()) << (r ? r->error : "null");
  AnalysisOptions o = test::session_options().analysis;
  o.from_ns = 300;
  o.to_ns = 600;
  Analysis a = analyze(b.path(), o);
  EXPECT_EQ(to_report_json(*r, 0).dump(1), to_report_json(a, 0).dump(1));
  EXPECT_EQ(r->summary.allocations, 3u);
}

TEST(SessionRange, FramesOfAStack) {
  TraceBuilder b(test::temp_trace("r-frames.mtr"));
  test::write_session_trace(b);
  auto s = open_session(b.finish());
  ASSERT_TRUE(s);
  auto f = s->frames(StackId{2});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].address, 0x2000u);
  EXPECT_TRUE(s->frames(kNoStack).empty());
}

}  // namespace
}  // namespace memtrail
