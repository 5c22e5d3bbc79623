// The pools' metrics that moved off the Engine onto block trackers
// (analyzer/src/trackers/): the pools' timelines and fragmentation samples
// (pool_timelines.hpp). Each is computed by its tracker alone
// (Engine::finish leaves it empty, the tracker's finish fills it), and
// analyze() (the CLI's report and JSON) and Session::open (the GUI's
// whole()) show it alike.
#include <cstdint>
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
  const PoolStats engine_alone = cache_of(engine_pass(trace.path));  // a copy
  EXPECT_TRUE(engine_alone.used.value.empty());
  EXPECT_TRUE(engine_alone.reserved.value.empty());
  EXPECT_TRUE(engine_alone.fragmentation.empty());
  EXPECT_EQ(engine_alone.final_fragmentation.reserved_bytes, 0u);

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

}  // namespace
}  // namespace memtrail
