// The pools' and sites' metrics that moved off the Engine onto block
// trackers (analyzer/src/trackers/): the pools' timelines and fragmentation
// samples (pool_timelines.hpp), the sites' and pools' counters and the
// pools' peaks (counters.hpp). Each is computed by its tracker alone
// (Engine::finish leaves it empty, the tracker's finish fills it), and
// analyze() (the CLI's report and JSON) and Session::open (the GUI's
// whole()) show it alike.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "block_tracker_test_util.hpp"
#include "memtrail/analysis.hpp"
#include "trace_builder.hpp"

namespace memtrail {
namespace {

using test::analyze_as_cli_and_gui;
using test::engine_pass;
using test::no_symbols;

constexpr std::uint64_t kMiB = 1 << 20;

// A caching pool (2) with one 4 MiB segment at 0x100000, and malloc (1):
//
//   t100  reserve pool 2 0x100000 4 MiB   no block yet: no sample
//   t200  alloc   pool 2 0x100000 1 MiB   sample 1 (the pool's first)
//   t300+ 10 malloc alloc/free pairs      the next sample waits 8 events per
//                                         block and segment (16) and 1,024 ns
//   t2000 alloc   pool 2 0x300000 1 MiB   sample 2: two 1 MiB gaps, 50 %
//   t2100 free    pool 2 0x100000
//   t2200 free    pool 2 0x300000         drained: sample 3 at once, 0 %
//   t2300 alloc   pool 2 0x180000 1 MiB   the end: gaps of 512 KiB and 2.5 MiB
struct SegmentTrace {
  SegmentTrace() : b(test::temp_trace("pool-trackers.mtr")) {
    b.pool(1, "malloc", PoolKind::heap);
    b.pool(2, "cache", PoolKind::caching);
    b.stack(1, 0, 0x1000);
    b.segment(100, EventKind::segment_reserve, 2, 0x100000, 4 * kMiB);
    b.alloc(200, 2, 0x100000, kMiB, 1);
    for (std::uint64_t k = 0; k < 10; ++k) {
      b.alloc(300 + 10 * k, 1, 0xA0, 16, 1);
      b.free(305 + 10 * k, 1, 0xA0);
    }
    b.alloc(2000, 2, 0x300000, kMiB, 1);
    b.free(2100, 2, 0x100000);
    b.free(2200, 2, 0x300000);
    b.alloc(2300, 2, 0x180000, kMiB, 1);
    path = b.finish();
  }
  test::TraceBuilder b;
  std::string path;
};

const PoolStats& cache_of(const Analysis& a) {
  const PoolStats* p = a.pool(PoolId{2});
  EXPECT_NE(p, nullptr);
  static const PoolStats none;
  return p ? *p : none;
}

struct Sample {
  std::uint64_t time_ns, used, free, largest, in_partial;
  double external;
  bool operator==(const Sample&) const = default;
};

Sample sample_of(const Fragmentation& f) {
  EXPECT_EQ(f.reserved_bytes, f.used_bytes + f.free_bytes);
  return {f.time_ns, f.used_bytes, f.free_bytes, f.largest_free_block, f.free_in_partial_segments,
          f.external};
}

std::vector<Sample> samples_of(const PoolStats& p) {
  std::vector<Sample> out;
  for (const Fragmentation& f : p.fragmentation) out.push_back(sample_of(f));
  return out;
}

TEST(PoolTrackers, TheTimelinesAndFragmentationAreTheirTrackers) {
  SegmentTrace trace;
  const Analysis a = engine_pass<detail::PoolTimelinesTracker>(trace.path);
  const PoolStats& cache = cache_of(a);
  EXPECT_EQ(samples_of(cache), (std::vector<Sample>{{200, kMiB, 3 * kMiB, 3 * kMiB, 3 * kMiB, 0},
                                                    {2000, 2 * kMiB, 2 * kMiB, kMiB, 2 * kMiB, 0.5},
                                                    {2200, 0, 4 * kMiB, 4 * kMiB, 0, 0}}));
  EXPECT_EQ(sample_of(cache.final_fragmentation),
            (Sample{2300, kMiB, 3 * kMiB, 5 * kMiB / 2, 3 * kMiB, 1.0 - 5.0 / 6}));
  // Buckets of 1,024 ns, each the maximum inside it, the state at its start
  // included.
  EXPECT_EQ(cache.used.time_ns, (std::vector<std::uint64_t>{0, 1024, 2048}));
  EXPECT_EQ(cache.used.value, (std::vector<std::uint64_t>{kMiB, 2 * kMiB, 2 * kMiB}));
  EXPECT_EQ(cache.reserved.value, (std::vector<std::uint64_t>(3, 4 * kMiB)));
  // malloc has no segment: a timeline, no fragmentation.
  const PoolStats* malloc_pool = a.pool(PoolId{1});
  ASSERT_NE(malloc_pool, nullptr);
  EXPECT_EQ(malloc_pool->used.value, (std::vector<std::uint64_t>{16}));
  EXPECT_TRUE(malloc_pool->fragmentation.empty());

  // The range ends after the free at t2100: its state then is the end's.
  AnalysisOptions to_2150 = no_symbols();
  to_2150.to_ns = 2150;
  const Analysis ranged_analysis = engine_pass<detail::PoolTimelinesTracker>(trace.path, to_2150);
  const PoolStats& ranged = cache_of(ranged_analysis);
  EXPECT_EQ(samples_of(ranged),
            (std::vector<Sample>{{200, kMiB, 3 * kMiB, 3 * kMiB, 3 * kMiB, 0},
                                 {2000, 2 * kMiB, 2 * kMiB, kMiB, 2 * kMiB, 0.5}}));
  EXPECT_EQ(sample_of(ranged.final_fragmentation),
            (Sample{2100, kMiB, 3 * kMiB, 2 * kMiB, 3 * kMiB, 1.0 - 2.0 / 3}));
}

TEST(PoolTrackers, AnalyzeAndTheSessionShowThePoolTimelinesAlike) {
  SegmentTrace trace;
  const test::CliAndGui both = analyze_as_cli_and_gui(trace.path);
  ASSERT_TRUE(both.cli.error.empty() && both.session);
  const PoolStats &cli = cache_of(both.cli), &gui = cache_of(both.gui());
  ASSERT_EQ(cli.fragmentation.size(), 3u);
  EXPECT_EQ(sample_of(cli.fragmentation[1]),
            (Sample{2000, 2 * kMiB, 2 * kMiB, kMiB, 2 * kMiB, 0.5}));
  EXPECT_EQ(samples_of(gui), samples_of(cli));
  EXPECT_EQ(sample_of(gui.final_fragmentation), sample_of(cli.final_fragmentation));
  EXPECT_EQ(cli.used.value, (std::vector<std::uint64_t>{kMiB, 2 * kMiB, 2 * kMiB}));
  EXPECT_EQ(gui.used.value, cli.used.value);
  EXPECT_EQ(gui.reserved.value, cli.reserved.value);
  EXPECT_EQ(gui.used.time_ns, cli.used.time_ns);
}

// malloc (1), a caching pool (2) with segments and its upstream (3),
// known as one only after its block:
//
//   t100 alloc pool 3 0x100000 4096 (stack 1)    t600 free pool 2 0x100000
//   t150 reserve pool 2 0x100000 2 MiB           t650 release pool 2 0x400000
//   t200 alloc pool 1 0xA0 100 (stack 2)         t700 alloc pool 1 0xC0 5000 (stack 2)
//   t300 reuse pool 2 0x100000 1 MiB (stack 3)   t800 free pool 1 0xC0
//   t400 alloc pool 1 0xB0 3000 (stack 2)        t960 free pool 1 0xD0, recorded
//   t500 free pool 1 0xA0                        before its alloc at t950 (10 B,
//   t550 reserve pool 2 0x400000 1 MiB           stack 2): a late free
struct CounterTrace {
  CounterTrace() : b(test::temp_trace("counters.mtr")) {
    b.pool(1, "malloc", PoolKind::heap);
    b.pool(3, "device", PoolKind::system);
    for (std::uint32_t s = 1; s <= 3; ++s) b.stack(s, 0, 0x1000 * s);
    b.alloc(100, 3, 0x100000, 4096, 1);
    b.writer().flush();  // the pool record below comes after this block
    b.pool(2, "cache", PoolKind::caching, 3);
    b.segment(150, EventKind::segment_reserve, 2, 0x100000, 2 * kMiB);
    b.alloc(200, 1, 0xA0, 100, 2);
    b.reuse(300, 2, 0x100000, kMiB, 3);
    b.alloc(400, 1, 0xB0, 3000, 2);
    b.free(500, 1, 0xA0);
    b.segment(550, EventKind::segment_reserve, 2, 0x400000, kMiB);
    b.free(600, 2, 0x100000);
    b.segment(650, EventKind::segment_release, 2, 0x400000, kMiB);
    b.alloc(700, 1, 0xC0, 5000, 2);
    b.free(800, 1, 0xC0);
    b.free(960, 1, 0xD0);
    b.alloc(950, 1, 0xD0, 10, 2);
    path = b.finish();
  }
  test::TraceBuilder b;
  std::string path;
};

struct PoolCounts {
  std::uint64_t allocations, reuses, frees, bytes, peak_used, peak_used_ns, peak_reserved,
      peak_reserved_ns;
  bool operator==(const PoolCounts&) const = default;
};

std::map<std::uint32_t, PoolCounts> pool_counts_of(const Analysis& a) {
  std::map<std::uint32_t, PoolCounts> out;
  for (const PoolStats& p : a.pools)
    out[p.info.id] = {p.allocations,
                      p.reuses,
                      p.frees,
                      p.bytes_allocated,
                      p.peak_used_bytes,
                      p.peak_used_time_ns,
                      p.peak_reserved_bytes,
                      p.peak_reserved_time_ns};
  return out;
}

struct SiteCounts {
  std::uint64_t calls, reuses, bytes;
  bool operator==(const SiteCounts&) const = default;
};

// (pool, stack) -> counts, for the sites that have any.
std::map<std::pair<std::uint32_t, std::uint32_t>, SiteCounts> site_counts_of(const Analysis& a) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, SiteCounts> out;
  for (const Site& s : a.sites)
    if (s.calls != 0) out[{s.pool.value, s.stack.value}] = {s.calls, s.reuses, s.bytes_allocated};
  return out;
}

struct SummaryCounts {
  std::uint64_t allocations, bytes, frees;
  bool operator==(const SummaryCounts&) const = default;
};

SummaryCounts summary_counts_of(const Analysis& a) {
  return {a.summary.allocations, a.summary.bytes_allocated, a.summary.frees};
}

// The caching pool's segment reserves and releases.
std::pair<std::uint64_t, std::uint64_t> segment_counts_of(const Analysis& a) {
  const PoolStats& p = cache_of(a);
  return {p.segment_reserves, p.segment_releases};
}

const std::map<std::pair<std::uint32_t, std::uint32_t>, SiteCounts> kSiteCounts{
    {{3, 1}, {1, 0, 4096}}, {{1, 2}, {4, 0, 8110}}, {{2, 3}, {1, 1, kMiB}}};
// The range opens at the first event (t100): every pool's first peak.
const std::map<std::uint32_t, PoolCounts> kPoolCounts{
    {1, {4, 0, 3, 8110, 8000, 700, 0, 100}},
    {2, {1, 1, 1, kMiB, kMiB, 300, 3 * kMiB, 550}},
    {3, {1, 0, 0, 4096, 4096, 100, 0, 100}}};
// The leaf pools' (1 and 2).
const SummaryCounts kSummaryCounts{5, 8110 + kMiB, 4};

TEST(PoolTrackers, TheCountersAndPoolPeaksAreTheirTrackers) {
  CounterTrace trace;
  // The counters are the counters tracker's, the pools' peaks the pool
  // timelines tracker's: their records of each pool and site live in the
  // Engine's and go out with them; the summary's sums are the counters
  // tracker's finish.
  const Analysis engine_alone = engine_pass(trace.path);
  EXPECT_EQ(summary_counts_of(engine_alone), (SummaryCounts{0, 0, 0}));
  EXPECT_EQ(engine_alone.summary.peak_used_bytes, kMiB + 3100);  // the Engine's, with the epoch
  const Analysis a = engine_pass<detail::CountersTracker, detail::PoolTimelinesTracker>(trace.path);
  EXPECT_EQ(site_counts_of(a), kSiteCounts);
  EXPECT_EQ(pool_counts_of(a), kPoolCounts);
  EXPECT_EQ(summary_counts_of(a), kSummaryCounts);
  ASSERT_NE(a.pool(PoolId{2}), nullptr);
  EXPECT_EQ(a.pool(PoolId{2})->reuse_ratio, 1.0);
  EXPECT_EQ(segment_counts_of(a), (std::pair<std::uint64_t, std::uint64_t>{2, 1}));

  // From t350: the range opens at t400 with the state replayed so far.
  AnalysisOptions from_350 = no_symbols();
  from_350.from_ns = 350;
  const Analysis late =
      engine_pass<detail::CountersTracker, detail::PoolTimelinesTracker>(trace.path, from_350);
  EXPECT_EQ(pool_counts_of(late),
            (std::map<std::uint32_t, PoolCounts>{{1, {3, 0, 3, 8010, 8000, 700, 0, 400}},
                                                 {2, {0, 0, 1, 0, kMiB, 400, 3 * kMiB, 550}},
                                                 {3, {0, 0, 0, 0, 4096, 400, 0, 400}}}));
  EXPECT_EQ(summary_counts_of(late), (SummaryCounts{3, 8010, 4}));
  EXPECT_EQ(segment_counts_of(late), (std::pair<std::uint64_t, std::uint64_t>{1, 1}));
}

TEST(PoolTrackers, AnalyzeAndTheSessionShowTheCountersAlike) {
  CounterTrace trace;
  const test::CliAndGui both = analyze_as_cli_and_gui(trace.path);
  ASSERT_TRUE(both.cli.error.empty() && both.session);
  const Analysis &cli = both.cli, &gui = both.gui();
  EXPECT_EQ(site_counts_of(cli), kSiteCounts);
  EXPECT_EQ(site_counts_of(gui), kSiteCounts);
  EXPECT_EQ(summary_counts_of(cli), kSummaryCounts);
  EXPECT_EQ(summary_counts_of(gui), kSummaryCounts);
  // malloc's reserved bytes come from the heap samples after the pass
  // (none here); the other pools' figures are the tracker's.
  std::map<std::uint32_t, PoolCounts> cli_pools = pool_counts_of(cli);
  EXPECT_EQ(cli_pools.at(2), kPoolCounts.at(2));
  EXPECT_EQ(cli_pools.at(3), kPoolCounts.at(3));
  EXPECT_EQ(cli_pools.at(1).allocations, 4u);
  EXPECT_EQ(pool_counts_of(gui), cli_pools);
}

}  // namespace
}  // namespace memtrail
