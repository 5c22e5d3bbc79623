// The per-block metrics that moved out of the Engine onto its block trackers
// (analyzer/src/trackers/block_trackers.hpp): the size and lifetime
// histograms, the large blocks, the used timeline, the temporaries and the
// scopes' growth and per-entry figures. Each is computed by its
// tracker alone (Engine::finish leaves it empty, the tracker's finish fills
// it), and analyze() (the CLI's report and JSON) and Session::open (the GUI's
// whole()) show it alike.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "block_tracker_test_util.hpp"
#include "engine.hpp"
#include "memtrail/analysis.hpp"
#include "session_test_util.hpp"

namespace memtrail {
namespace {

using test::analyze_as_cli_and_gui;
using test::CliAndGui;
using test::engine_pass;
using test::no_symbols;

constexpr std::uint64_t kMiB = 1 << 20;

// Three pools: malloc (1), a caching pool (2) and its upstream (3), which is
// known as an upstream only after its first block. Every block's event:
//
//   t100  alloc pool 3 0x100000 4096     (an upstream's: in no process figure)
//         pool 2 "cache" registers, parent 3
//   t200  alloc pool 1 0xA0      100
//   t300  alloc pool 2 0x100000  2 MiB
//   t400  alloc pool 1 0xB0      3000
//   t500  free  pool 1 0xA0               lived 300 ns
//   t700  free  pool 2 0x100000           lived 400 ns
//   t800  alloc pool 2 0x400000  1 MiB   never freed: a leak
//   t900  alloc pool 1 0xC0      5 MiB
//   t1900 free  pool 1 0xC0               lived 1000 ns
//   t3000 alloc pool 1 0xD0      10
//
// Process-wide used (pools 1 and 2) peaks at 6 MiB + 3000 (t900) and ends
// at 1 MiB + 3010.
struct BlockTrace {
  BlockTrace() : b(test::temp_trace("block-trackers.mtr")) {
    b.pool(1, "malloc", PoolKind::heap);
    b.pool(3, "device", PoolKind::system);
    b.stack(1, 0, 0x1000);
    b.stack(2, 0, 0x2000);
    b.stack(3, 0, 0x3000);
    b.alloc(100, 3, 0x100000, 4096, 1);
    b.writer().flush();  // the pool record below comes after this block
    b.pool(2, "cache", PoolKind::caching, 3);
    b.alloc(200, 1, 0xA0, 100, 2);
    b.alloc(300, 2, 0x100000, 2 * kMiB, 3);
    b.alloc(400, 1, 0xB0, 3000, 2);
    b.free(500, 1, 0xA0);
    b.free(700, 2, 0x100000);
    b.alloc(800, 2, 0x400000, kMiB, 3);
    b.alloc(900, 1, 0xC0, 5 * kMiB, 2);
    b.free(1900, 1, 0xC0);
    b.alloc(3000, 1, 0xD0, 10, 2);
    path = b.finish();
  }
  test::TraceBuilder b;
  std::string path;
};

std::size_t bucket_of(std::uint64_t value) {
  return value < 2 ? 0 : 63 - static_cast<std::size_t>(__builtin_clzll(value));
}

// The histogram holding exactly `values`, bucket by bucket.
void expect_histogram(const Histogram& h, const std::vector<std::uint64_t>& values) {
  std::vector<std::uint64_t> counts(64, 0), sums(64, 0);
  for (std::uint64_t v : values) {
    ++counts[bucket_of(v)];
    sums[bucket_of(v)] += v;
  }
  EXPECT_EQ(h.counts, counts);
  EXPECT_EQ(h.sums, sums);
}

TEST(BlockTrackers, TheSizeHistogramIsItsTrackersOverTheLeafPools) {
  BlockTrace trace;
  EXPECT_TRUE(engine_pass(trace.path).size_histogram.counts.empty());

  const Analysis a = engine_pass<detail::SizeHistogramTracker>(trace.path);
  // Not the upstream's 4096: it was counted before pool 3 became one.
  expect_histogram(a.size_histogram, {100, 2 * kMiB, 3000, kMiB, 5 * kMiB, 10});

  AnalysisOptions from_350 = no_symbols();
  from_350.from_ns = 350;
  expect_histogram(engine_pass<detail::SizeHistogramTracker>(trace.path, from_350).size_histogram,
                   {3000, kMiB, 5 * kMiB, 10});
}

TEST(BlockTrackers, TheLifetimeHistogramIsItsTrackersOverTheLeafPools) {
  BlockTrace trace;
  EXPECT_TRUE(engine_pass(trace.path).lifetime_histogram.counts.empty());

  const Analysis a = engine_pass<detail::LifetimeHistogramTracker>(trace.path);
  expect_histogram(a.lifetime_histogram, {300, 400, 1000});

  // A free outside the range is no lifetime of it.
  AnalysisOptions to_600 = no_symbols();
  to_600.to_ns = 600;
  expect_histogram(
      engine_pass<detail::LifetimeHistogramTracker>(trace.path, to_600).lifetime_histogram, {300});
}

struct Large {
  std::uint32_t pool;
  std::uint64_t address, size, alloc_ns, free_ns;
  bool operator==(const Large&) const = default;
};

std::vector<Large> large_of(const Analysis& a) {
  std::vector<Large> out;
  for (const BlockLifetime& b : a.large_blocks)
    out.push_back({b.pool.value, b.address, b.size, b.alloc_ns, b.free_ns});
  return out;
}

TEST(BlockTrackers, TheLargeBlocksAreTheirTrackers) {
  BlockTrace trace;
  EXPECT_TRUE(engine_pass(trace.path).large_blocks.empty());

  // Freed and leaked blocks of 1 MiB or more, by allocation time.
  const Analysis a = engine_pass<detail::LargeBlocksTracker>(trace.path);
  EXPECT_EQ(large_of(a), (std::vector<Large>{{2, 0x100000, 2 * kMiB, 300, 700},
                                             {2, 0x400000, kMiB, 800, kTimeMax},
                                             {1, 0xC0, 5 * kMiB, 900, 1900}}));
  ASSERT_EQ(a.large_blocks.size(), 3u);
  EXPECT_EQ(a.large_blocks[1].leak, LeakClass::unknown);  // live, never classified

  // At most two: the largest two.
  AnalysisOptions two = no_symbols();
  two.max_large_blocks = 2;
  EXPECT_EQ(
      large_of(engine_pass<detail::LargeBlocksTracker>(trace.path, two)),
      (std::vector<Large>{{2, 0x100000, 2 * kMiB, 300, 700}, {1, 0xC0, 5 * kMiB, 900, 1900}}));

  // Only blocks allocated in the range.
  AnalysisOptions from_350 = no_symbols();
  from_350.from_ns = 350;
  EXPECT_EQ(
      large_of(engine_pass<detail::LargeBlocksTracker>(trace.path, from_350)),
      (std::vector<Large>{{2, 0x400000, kMiB, 800, kTimeMax}, {1, 0xC0, 5 * kMiB, 900, 1900}}));
}

TEST(BlockTrackers, TheUsedTimelineIsItsTrackers) {
  BlockTrace trace;
  EXPECT_TRUE(engine_pass(trace.path).used.value.empty());

  const Analysis a = engine_pass<detail::UsedTimelineTracker>(trace.path);
  // Buckets of 1,024 ns, each the maximum inside it, the state at its start
  // included: the peak (t900) holds until the free at t1900.
  EXPECT_EQ(a.used.time_ns, (std::vector<std::uint64_t>{0, 1024, 2048}));
  EXPECT_EQ(a.used.value,
            (std::vector<std::uint64_t>{6 * kMiB + 3000, 6 * kMiB + 3000, kMiB + 3010}));
}

TEST(BlockTrackers, AnalyzeAndTheSessionShowEveryBlockTrackersMetricAlike) {
  BlockTrace trace;
  const CliAndGui both = analyze_as_cli_and_gui(trace.path);
  ASSERT_TRUE(both.cli.error.empty() && both.session);
  const Analysis &cli = both.cli, &gui = both.gui();

  expect_histogram(cli.size_histogram, {100, 2 * kMiB, 3000, kMiB, 5 * kMiB, 10});
  EXPECT_EQ(gui.size_histogram.counts, cli.size_histogram.counts);
  EXPECT_EQ(gui.size_histogram.sums, cli.size_histogram.sums);
  expect_histogram(cli.lifetime_histogram, {300, 400, 1000});
  EXPECT_EQ(gui.lifetime_histogram.counts, cli.lifetime_histogram.counts);
  EXPECT_EQ(gui.lifetime_histogram.sums, cli.lifetime_histogram.sums);

  // The upstream's block too: its pool's own figures show it.
  EXPECT_EQ(large_of(cli), (std::vector<Large>{{3, 0x100000, 4096, 100, kTimeMax},
                                               {2, 0x100000, 2 * kMiB, 300, 700},
                                               {1, 0xB0, 3000, 400, kTimeMax},
                                               {2, 0x400000, kMiB, 800, kTimeMax},
                                               {1, 0xC0, 5 * kMiB, 900, 1900}}));
  EXPECT_EQ(large_of(gui), large_of(cli));

  ASSERT_FALSE(cli.used.value.empty());
  EXPECT_EQ(cli.used.value.back(), kMiB + 3010);
  EXPECT_EQ(gui.used.value, cli.used.value);
  EXPECT_EQ(gui.used.time_ns, cli.used.time_ns);
}

// Temporaries (heaptrack's rule: freed by the allocating thread before it
// allocated anything else) on two threads, a malloc pool (1), a caching
// pool (2) and its upstream (3), known as one only after its temporary:
//
//   t100 T1 alloc pool 3 0x100000 4096 (stack 1); t150 T1 free it   temporary, upstream's
//        pool 2 "cache" registers, parent 3
//   t200 T1 alloc pool 1 0xA0 (stack 2); t250 T1 free it             temporary
//   t300 T2 alloc pool 1 0xB0 (stack 2); t310 T1 alloc 0xC0 (stack 3);
//   t320 T2 free 0xB0                    temporary: T1's alloc is another thread's
//   t330 T2 free 0xC0                    not: another thread frees it
//   t400 T1 alloc 0xD0, t410 T1 alloc 0xE0 (stack 3);
//   t420 T1 free 0xD0                    not: T1 allocated 0xE0 since
//   t430 T1 free 0xE0                    temporary
//   t500 T1 alloc pool 2 0x100000 1 MiB (stack 1); t600 T1 free it   temporary
struct TemporariesTrace {
  TemporariesTrace() : b(test::temp_trace("temporaries.mtr")) {
    b.pool(1, "malloc", PoolKind::heap);
    b.pool(3, "device", PoolKind::system);
    for (std::uint32_t s = 1; s <= 3; ++s) b.stack(s, 0, 0x1000 * s);
    b.alloc(100, 3, 0x100000, 4096, 1);
    b.free(150, 3, 0x100000);
    b.writer().flush();  // the pool record below comes after these
    b.pool(2, "cache", PoolKind::caching, 3);
    b.alloc(200, 1, 0xA0, 100, 2);
    b.free(250, 1, 0xA0);
    b.alloc(300, 1, 0xB0, 50, 2, 2);
    b.alloc(310, 1, 0xC0, 60, 3);
    b.free(320, 1, 0xB0, 2);
    b.free(330, 1, 0xC0, 2);
    b.alloc(400, 1, 0xD0, 70, 3);
    b.alloc(410, 1, 0xE0, 80, 3);
    b.free(420, 1, 0xD0);
    b.free(430, 1, 0xE0);
    b.alloc(500, 2, 0x100000, kMiB, 1);
    b.free(600, 2, 0x100000);
    path = b.finish();
  }
  test::TraceBuilder b;
  std::string path;
};

// (pool, stack) -> the site's temporaries, for the sites that have any.
using SiteTemporaries = std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t>;

SiteTemporaries temporaries_of(const Analysis& a) {
  SiteTemporaries out;
  for (const Site& s : a.sites)
    if (s.temporaries != 0) out[{s.pool.value, s.stack.value}] += s.temporaries;
  return out;
}

TEST(BlockTrackers, TheTemporariesAreTheirTrackers) {
  TemporariesTrace trace;
  const Analysis engine_alone = engine_pass(trace.path);
  EXPECT_EQ(engine_alone.summary.temporary_allocations, 0u);
  EXPECT_TRUE(temporaries_of(engine_alone).empty());

  const Analysis a = engine_pass<detail::TemporariesTracker>(trace.path);
  // The upstream's own site keeps its temporary; the process-wide count,
  // over the leaf pools, does not.
  EXPECT_EQ(temporaries_of(a),
            (SiteTemporaries{{{3, 1}, 1}, {{1, 2}, 2}, {{1, 3}, 1}, {{2, 1}, 1}}));
  EXPECT_EQ(a.summary.temporary_allocations, 4u);

  // Both the alloc and the free in the range.
  AnalysisOptions from_280 = no_symbols();
  from_280.from_ns = 280;
  const Analysis late = engine_pass<detail::TemporariesTracker>(trace.path, from_280);
  EXPECT_EQ(temporaries_of(late), (SiteTemporaries{{{1, 2}, 1}, {{1, 3}, 1}, {{2, 1}, 1}}));
  EXPECT_EQ(late.summary.temporary_allocations, 3u);
  AnalysisOptions to_550 = no_symbols();
  to_550.to_ns = 550;
  EXPECT_EQ(
      engine_pass<detail::TemporariesTracker>(trace.path, to_550).summary.temporary_allocations,
      3u);
}

TEST(BlockTrackers, AnalyzeAndTheSessionShowTheTemporariesAlike) {
  TemporariesTrace trace;
  const CliAndGui both = analyze_as_cli_and_gui(trace.path);
  ASSERT_TRUE(both.cli.error.empty() && both.session);
  const Analysis &cli = both.cli, &gui = both.gui();

  EXPECT_EQ(cli.summary.temporary_allocations, 4u);
  EXPECT_EQ(gui.summary.temporary_allocations, 4u);
  // Grouped by source (no symbols here: by address), as the report shows them.
  EXPECT_EQ(temporaries_of(cli),
            (SiteTemporaries{{{3, 1}, 1}, {{1, 2}, 2}, {{1, 3}, 1}, {{2, 1}, 1}}));
  EXPECT_EQ(temporaries_of(gui), temporaries_of(cli));
}

// Four entries of scope "step", each leaking 48 B (stack 1) and freeing a
// 64 B block (stack 2) inside: entry k begins at 1000k, ends at 1000k + 500.
struct ScopeTrace {
  ScopeTrace() : b(test::temp_trace("scope-trackers.mtr")) {
    b.pool(1, "malloc", PoolKind::heap);
    b.writer().add_scope(ScopeInfo{1, "step", ScopeKind::user, 0});
    b.stack(1, 0, 0x1000);
    b.stack(2, 0, 0x2000);
    for (std::uint64_t k = 1; k <= 4; ++k) {
      b.scope(1000 * k, EventKind::scope_begin, 1);
      b.alloc(1000 * k + 100, 1, 0x100 + 0x40 * k, 48, 1);
      b.alloc(1000 * k + 200, 1, 0x900, 64, 2);
      b.free(1000 * k + 300, 1, 0x900);
      b.scope(1000 * k + 500, EventKind::scope_end, 1);
    }
    path = b.finish();
  }
  test::TraceBuilder b;
  std::string path;
};

struct ScopeFigures {
  std::uint64_t entries, escaped, max_escaped, live_at_end;
  double growth;
  std::vector<std::uint64_t> escaped_per_entry, live_over_entries;
  std::vector<std::pair<std::uint32_t, double>> growth_sites;  // (stack, bytes per entry)
  bool operator==(const ScopeFigures&) const = default;
};

ScopeFigures step_of(const Analysis& a) {
  EXPECT_EQ(a.scopes.size(), 1u);
  if (a.scopes.empty()) return {};
  const ScopeStats& s = a.scopes.front();
  ScopeFigures f{s.entries,
                 s.bytes_escaped,
                 s.max_escaped_per_entry,
                 s.live_bytes_at_end,
                 s.growth_per_entry_bytes,
                 s.escaped_per_entry.value,
                 s.live_over_entries.value,
                 {}};
  for (const GrowthSite& g : s.growth_sites)
    f.growth_sites.emplace_back(a.sites.at(g.site.value).stack.value, g.bytes_per_entry);
  return f;
}

TEST(BlockTrackers, TheScopesGrowthIsItsTrackers) {
  ScopeTrace trace;
  // The Engine counts the entries (the scopes' structure); every figure of
  // their growth is the tracker's.
  EXPECT_EQ(step_of(engine_pass(trace.path)), (ScopeFigures{4, 0, 0, 0, 0, {}, {}, {}}));

  EXPECT_EQ(step_of(engine_pass<detail::ScopeGrowthTracker>(trace.path)),
            (ScopeFigures{4, 192, 48, 192, 48, {48, 48, 48, 48}, {48, 96, 144, 192}, {{1, 48}}}));

  // The range ends inside entry 3, after its leak: two entries, and the
  // live bytes at the range's end include the third leak.
  AnalysisOptions to_3150 = no_symbols();
  to_3150.to_ns = 3150;
  EXPECT_EQ(step_of(engine_pass<detail::ScopeGrowthTracker>(trace.path, to_3150)),
            (ScopeFigures{2, 96, 48, 144, 48, {48, 48}, {48, 96}, {{1, 48}}}));
}

TEST(BlockTrackers, AnalyzeAndTheSessionShowTheScopesGrowthAlike) {
  ScopeTrace trace;
  const CliAndGui both = analyze_as_cli_and_gui(trace.path);
  ASSERT_TRUE(both.cli.error.empty() && both.session);
  const Analysis& cli = both.cli;
  const ScopeFigures expected{4, 192, 48, 192, 48, {48, 48, 48, 48}, {48, 96, 144, 192}, {{1, 48}}};
  EXPECT_EQ(step_of(cli), expected);
  EXPECT_EQ(step_of(both.gui()), expected);
}

}  // namespace
}  // namespace memtrail
