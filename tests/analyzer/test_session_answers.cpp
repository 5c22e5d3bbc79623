// Answers the GUI relies on: the fragmentation series' cost, the state at the
// peak as an event position, the largest blocks of any range and the reading
// progress steps, on synthesized traces with known contents.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "session_test_util.hpp"

namespace memtrail {
namespace {

using test::open_session;
using test::TraceBuilder;

AnalysisOptions plain() {
  AnalysisOptions o;
  o.symbolize = false;
  o.symbol_cache = false;
  return o;
}

// A pool with one segment and 1000 live 4 KiB blocks in 2000 slots, churned
// (free one, allocate one) for `events` events, 100 ns apart.
std::uint64_t write_churn(TraceBuilder& b, std::uint64_t events) {
  constexpr std::uint64_t kBase = 0x10000000, kSlot = 4096, kSlots = 2000;
  b.pool(1, "dev", PoolKind::caching);
  std::uint64_t t = 100, n = 0;
  b.segment(t, EventKind::segment_reserve, 1, kBase, kSlots * kSlot);
  ++n;
  for (std::uint64_t i = 0; i < kSlots / 2; ++i, ++n)
    b.alloc(t += 100, 1, kBase + 2 * i * kSlot, 100 + i);
  for (std::uint64_t i = 0; n < events; ++i, n += 2) {
    std::uint64_t out = (i * 7919) % kSlots, in = (i * 7919 + 1) % kSlots;
    b.free(t += 100, 1, kBase + out * kSlot);
    b.alloc(t += 100, 1, kBase + in * kSlot, 100 + i % 4000);
  }
  return n;
}

TEST(FragmentationSeries, AmortizedOverTheLiveSetAndExactWhereSampled) {
  TraceBuilder b(test::temp_trace("frag-sched.mtr"));
  const std::uint64_t events = write_churn(b, 100000);
  Analysis a = analyze(b.finish(), plain());
  ASSERT_TRUE(a.error.empty()) << a.error;
  const PoolStats* p = a.pool(PoolId{1});
  ASSERT_NE(p, nullptr);
  // At most one sample per 8 events per live block (~1000 of them) and
  // segment: sampling costs ~1/8 of a sort per event, whatever the timeline.
  ASSERT_GE(p->fragmentation.size(), 2u);
  EXPECT_LE(p->fragmentation.size(), events / (8 * 900) + 2);
  for (const Fragmentation& f : p->fragmentation) {
    SegmentMap m = segment_map_at(b.path(), PoolId{1}, f.time_ns);
    ASSERT_TRUE(m.error.empty()) << m.error;
    EXPECT_EQ(f.used_bytes, m.fragmentation.used_bytes) << f.time_ns;
    EXPECT_EQ(f.free_bytes, m.fragmentation.free_bytes) << f.time_ns;
    EXPECT_EQ(f.largest_free_block, m.fragmentation.largest_free_block) << f.time_ns;
    EXPECT_EQ(f.free_in_partial_segments, m.fragmentation.free_in_partial_segments);
  }
}

// Churn in the heap, then the peak: a device block raises used to its
// maximum and a heap block is freed at the same nanosecond.
TEST(SessionPeak, BreakdownAtThePeakPositionSumsToThePeak) {
  TraceBuilder b(test::temp_trace("peak-pos.mtr"));
  b.pool(1, "malloc", PoolKind::heap);
  b.pool(2, "dev", PoolKind::caching);
  std::uint64_t t = 0, n = 0;
  for (std::uint64_t i = 0; i < 150000; ++i, n += 2) {
    b.alloc(t += 10, 1, 0x1000 + (i % 64) * 0x1000, 64 + i % 1000);
    b.free(t += 10, 1, 0x1000 + (i % 64) * 0x1000);
  }
  b.alloc(t += 10, 1, 0x900000, 5000);
  b.segment(t += 10, EventKind::segment_reserve, 2, 0x40000000, 1 << 20);
  n += 2;
  const std::uint64_t peak_t = t += 10;
  b.alloc(peak_t, 2, 0x40000000, 300000);  // the peak: 305000 used
  const std::uint64_t peak_position = ++n;
  b.free(peak_t, 1, 0x900000);  // same nanosecond
  b.alloc(t += 10, 1, 0x900000, 100);
  auto s = open_session(b.finish(), test::session_options());
  ASSERT_TRUE(s);
  const Summary& sum = s->whole().summary;
  EXPECT_EQ(sum.peak_used_bytes, 305000u);
  EXPECT_EQ(sum.peak_time_ns, peak_t);
  EXPECT_EQ(sum.peak_position, peak_position);

  auto used_of = [](const std::vector<PoolBreakdown>& pools) {
    std::uint64_t used = 0;
    for (const PoolBreakdown& p : pools) used += p.used;  // both pools are leaves
    return used;
  };
  EXPECT_EQ(used_of(s->breakdown(sum.peak_time_ns)), 300000u);  // after the free
  auto at_peak = s->breakdown_at_position(sum.peak_position);
  ASSERT_EQ(at_peak.size(), 2u);
  EXPECT_EQ(used_of(at_peak), sum.peak_used_bytes);
  EXPECT_EQ(at_peak[1].reserved, 1u << 20);
  EXPECT_EQ(at_peak[1].cached_free, 0u);
  EXPECT_EQ(at_peak[1].fragmented, (1u << 20) - 300000u);

  SegmentMap m = s->segment_map_at_position(PoolId{2}, sum.peak_position);
  ASSERT_TRUE(m.error.empty()) << m.error;
  EXPECT_EQ(m.time_ns, peak_t);
  ASSERT_EQ(m.segments.size(), 1u);
  ASSERT_EQ(m.segments[0].blocks.size(), 1u);
  EXPECT_EQ(m.segments[0].blocks[0].size, 300000u);
  // One event earlier: the device block is not there yet.
  EXPECT_EQ(used_of(s->breakdown_at_position(sum.peak_position - 1)), 5000u);
}

struct Lifetime {
  std::uint64_t alloc, free, size, address;
};

// 3000 blocks of distinct sizes (1000 .. 3999 bytes) with overlapping
// lifetimes; none reaches whole()'s 1 MiB large-block threshold.
std::vector<Lifetime> write_lifetimes(TraceBuilder& b) {
  b.pool(1, "malloc", PoolKind::heap);
  std::vector<Lifetime> blocks;
  for (std::uint64_t i = 0; i < 3000; ++i)
    blocks.push_back(
        {10 * i, 10 * i + 5 + (i * 131) % 4000, 1000 + (i * 37) % 3000, 0x1000 * (i + 1)});
  blocks.back().free = kTimeMax;  // live at the end
  struct Ev {
    std::uint64_t t;
    bool alloc;
    const Lifetime* b;
  };
  std::vector<Ev> evs;
  for (const Lifetime& l : blocks) {
    evs.push_back({l.alloc, true, &l});
    if (l.free != kTimeMax) evs.push_back({l.free, false, &l});
  }
  std::stable_sort(evs.begin(), evs.end(), [](const Ev& x, const Ev& y) { return x.t < y.t; });
  for (const Ev& e : evs)
    e.alloc ? b.alloc(e.t, 1, e.b->address, e.b->size) : b.free(e.t, 1, e.b->address);
  return blocks;
}

TEST(SessionLargestBlocks, AnyRangeOfWholeSlicesHasItsOwnLargest) {
  TraceBuilder b(test::temp_trace("slices.mtr"));
  const std::vector<Lifetime> blocks = write_lifetimes(b);
  SessionOptions o = test::session_options();
  o.analysis.large_block_bytes = 1 << 20;
  auto s = open_session(b.finish(), o);
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->whole().large_blocks.empty());
  // First event at 0, last at 29990 + ...: 256 slices of 128 ns.
  std::uint64_t last = 0;
  for (const Lifetime& l : blocks)
    last = std::max({last, l.alloc, l.free == kTimeMax ? 0 : l.free});
  std::uint64_t w = 1;
  while (last / w >= 256) w *= 2;
  for (auto [k, m] : {std::pair{0, 256}, {0, 1}, {10, 11}, {37, 90}, {200, 256}, {128, 130}})
    for (std::size_t n : {1, 10, 64}) {
      const std::uint64_t t0 = k * w, t1 = m * w - 1;
      std::vector<Lifetime> want;
      for (const Lifetime& l : blocks)
        if (l.alloc <= t1 && l.free >= t0) want.push_back(l);
      std::sort(want.begin(), want.end(), [](auto& x, auto& y) { return x.size > y.size; });
      want.resize(std::min(want.size(), n));
      std::vector<std::uint64_t> want_sizes, got_sizes;
      for (const Lifetime& l : want) want_sizes.push_back(l.size);
      for (const BlockLifetime& x : s->largest_blocks(t0, t1, n)) got_sizes.push_back(x.size);
      std::sort(want_sizes.begin(), want_sizes.end());
      std::sort(got_sizes.begin(), got_sizes.end());
      EXPECT_EQ(got_sizes, want_sizes) << "[" << t0 << ", " << t1 << "] n=" << n;
    }
  // Sorted by alloc time, with their lifetimes.
  auto whole = s->largest_blocks(0, kTimeMax, 64);
  ASSERT_EQ(whole.size(), 64u);
  EXPECT_TRUE(std::is_sorted(whole.begin(), whole.end(),
                             [](auto& x, auto& y) { return x.alloc_ns < y.alloc_ns; }));
  for (const BlockLifetime& x : whole) {
    const Lifetime& l = blocks[x.address / 0x1000 - 1];
    EXPECT_EQ(x.alloc_ns, l.alloc);
    EXPECT_EQ(x.free_ns, l.free);
    EXPECT_EQ(x.size, l.size);
  }
}

TEST(SessionProgress, ReadingStepsAreAtMostOneChunk) {
  TraceBuilder b(test::temp_trace("progress.mtr"));
  b.pool(1, "malloc", PoolKind::heap);
  std::uint64_t rng = 1;
  auto next = [&] { return (rng = rng * 6364136223846793005ull + 1442695040888963407ull) >> 24; };
  for (std::uint64_t i = 0; i < 300000; ++i) {  // random addresses and sizes: ~3 MB of file
    const std::uint64_t address = next() << 4;
    b.alloc(20 * i, 1, address, next() % 100000);
    b.free(20 * i + 10, 1, address);
  }
  std::vector<std::uint64_t> done;
  OpenResult r = Session::open(b.finish(), test::session_options(), [&](const LoadProgress& p) {
    if (p.stage == LoadStage::reading) done.push_back(p.done);
    return true;
  });
  ASSERT_TRUE(r.session) << r.message;
  const std::uint64_t size = r.session->file_bytes();
  ASSERT_GT(size, 2u << 20);  // several chunks
  ASSERT_FALSE(done.empty());
  EXPECT_EQ(done.back(), size);
  // A chunk is ~1 MiB of events before compression: no step is longer.
  std::uint64_t before = 0;
  for (std::uint64_t d : done) {
    EXPECT_LE(d - before, (1u << 20) + (64u << 10));
    before = d;
  }
}

}  // namespace
}  // namespace memtrail
