// The leak counts moved off the Engine onto a block tracker
// (analyzer/src/trackers/leak_counts.hpp): by class in each site, each
// pool and the process-wide totals over the leaf pools. The Engine alone
// leaves them empty (it only tells which blocks are left live and their
// class), its tracker fills them, and analyze() (the CLI's report and JSON)
// and Session::open (the GUI's whole()) show them alike.
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "block_tracker_test_util.hpp"
#include "memtrail/analysis.hpp"
#include "trace_builder.hpp"

namespace memtrail {
namespace {

using test::analyze_as_cli_and_gui;
using test::engine_pass;
using test::no_symbols;

// malloc (1), a caching pool (2) and its upstream (3), known as one only
// after its block. Every block is left live, classified at t900:
//
//   t100 pool 1 0xA0  100 (stack 1) direct      t140 pool 1 0xE0  500 (stack 3) runtime
//   t110 pool 1 0xB0  200 (stack 1) indirect    t150 pool 1 0xF0  600 (stack 3) unclassified
//   t120 pool 1 0xC0  300 (stack 2) reachable   t160 pool 3 0x100000 4096 (stack 1) direct
//   t130 pool 1 0xD0  400 (stack 2) possible    t190 pool 2 0x300000 700 (stack 2) direct
//
// and pool 2's 0x200000 (t170, stack 2) is freed at t180.
struct LeakTrace {
  explicit LeakTrace(bool exec) : b(test::temp_trace("leak-counts.mtr")) {
    b.pool(1, "malloc", PoolKind::heap);
    b.pool(3, "device", PoolKind::system);
    for (std::uint32_t s = 1; s <= 3; ++s) b.stack(s, 0, 0x1000 * s);
    b.alloc(100, 1, 0xA0, 100, 1);
    b.alloc(110, 1, 0xB0, 200, 1);
    b.alloc(120, 1, 0xC0, 300, 2);
    b.alloc(130, 1, 0xD0, 400, 2);
    b.alloc(140, 1, 0xE0, 500, 3);
    b.alloc(150, 1, 0xF0, 600, 3);
    b.alloc(160, 3, 0x100000, 4096, 1);
    b.writer().flush();  // the pool record below comes after these
    b.pool(2, "cache", PoolKind::caching, 3);
    b.alloc(170, 2, 0x200000, 1000, 2);
    b.free(180, 2, 0x200000);
    b.alloc(190, 2, 0x300000, 700, 2);
    b.reachability(900, 1, 0xA0, 100, LeakClass::direct);
    b.reachability(900, 1, 0xB0, 200, LeakClass::indirect);
    b.reachability(900, 1, 0xC0, 300, LeakClass::reachable);
    b.reachability(900, 1, 0xD0, 400, LeakClass::possible);
    b.reachability(900, 1, 0xE0, 500, LeakClass::runtime);
    b.reachability(900, 3, 0x100000, 4096, LeakClass::direct);
    b.reachability(900, 2, 0x300000, 700, LeakClass::direct);
    if (exec) {  // the image called exec: what no scan classified is exec_replaced
      b.writer().add_string(7, "/bin/true");
      Event e;
      e.time_ns = 950;
      e.kind = EventKind::mark;
      e.thread = 1;
      e.aux = 7;
      e.detail = static_cast<std::uint8_t>(MarkDetail::exec);
      b.writer().add_event(e);
    }
    path = b.finish();
  }
  test::TraceBuilder b;
  std::string path;
};

using T = std::pair<std::uint64_t, std::uint64_t>;  // (bytes, blocks)
T t(const Tally& x) {
  return {x.bytes, x.blocks};
}

// (pool, stack) -> leaked, direct, indirect, reachable, possible; sites with any.
struct SiteFigures {
  T leaked, direct, indirect, reachable, possible;
  bool operator==(const SiteFigures&) const = default;
};
using SiteLeaks = std::map<std::pair<std::uint32_t, std::uint32_t>, SiteFigures>;

SiteLeaks sites_of(const Analysis& a) {
  SiteLeaks out;
  for (const Site& s : a.sites) {
    const SiteFigures f{t(s.leaked), t(s.direct), t(s.indirect), t(s.reachable), t(s.possible)};
    if (f != SiteFigures{}) out[{s.pool.value, s.stack.value}] = f;
  }
  return out;
}

struct Totals {
  T direct, indirect, reachable, possible, runtime, exec_replaced, summary_leaked;
  std::size_t leak_sites;
  bool operator==(const Totals&) const = default;
};

Totals totals_of(const Analysis& a) {
  const Leaks& l = a.leaks;
  return {t(l.direct),  t(l.indirect),      t(l.reachable),      t(l.possible),
          t(l.runtime), t(l.exec_replaced), t(a.summary.leaked), l.sites.size()};
}

std::map<std::uint32_t, T> pools_of(const Analysis& a) {
  std::map<std::uint32_t, T> out;
  for (const PoolStats& p : a.pools) out[p.info.id] = t(p.leaked);
  return out;
}

const SiteLeaks kSites{{{1, 1}, {{300, 2}, {100, 1}, {200, 1}, {}, {}}},
                       {{1, 2}, {{}, {}, {}, {300, 1}, {400, 1}}},
                       {{1, 3}, {{600, 1}, {600, 1}, {}, {}, {}}},
                       {{3, 1}, {{4096, 1}, {4096, 1}, {}, {}, {}}},
                       {{2, 2}, {{700, 1}, {700, 1}, {}, {}, {}}}};
// The leaf pools' (1 and 2); the leak sites: (1,1) direct and indirect,
// (1,2) reachable and possible, (1,3) and (2,2) direct.
const Totals kTotals{{1400, 3}, {200, 1}, {300, 1}, {400, 1}, {500, 1}, {}, {1600, 4}, 6};

TEST(LeakCounts, TheLeakCountsAreTheirTrackers) {
  LeakTrace trace(false);
  const Analysis engine_alone = engine_pass(trace.path);
  EXPECT_TRUE(engine_alone.leaks.classified);
  EXPECT_TRUE(sites_of(engine_alone).empty());
  EXPECT_EQ(totals_of(engine_alone), Totals{});
  EXPECT_EQ(pools_of(engine_alone), (std::map<std::uint32_t, T>{{1, {}}, {2, {}}, {3, {}}}));

  const Analysis a = engine_pass<detail::LeakCountsTracker>(trace.path);
  EXPECT_EQ(sites_of(a), kSites);
  EXPECT_EQ(totals_of(a), kTotals);
  EXPECT_EQ(pools_of(a),
            (std::map<std::uint32_t, T>{{1, {900, 3}}, {2, {700, 1}}, {3, {4096, 1}}}));

  // Only the blocks allocated in the range.
  AnalysisOptions from_125 = no_symbols();
  from_125.from_ns = 125;
  const Analysis late = engine_pass<detail::LeakCountsTracker>(trace.path, from_125);
  EXPECT_EQ(totals_of(late), (Totals{{1300, 2}, {}, {}, {400, 1}, {500, 1}, {}, {1300, 2}, 3}));
}

TEST(LeakCounts, AnImageThatExecdLeavesItsUnclassifiedBlocksOutOfTheClasses) {
  LeakTrace trace(true);
  const Analysis a = engine_pass<detail::LeakCountsTracker>(trace.path);
  EXPECT_TRUE(a.leaks.ended_at_exec);
  EXPECT_EQ(totals_of(a),
            (Totals{{800, 2}, {200, 1}, {300, 1}, {400, 1}, {500, 1}, {600, 1}, {1000, 3}, 5}));
  EXPECT_EQ(sites_of(a).count({1, 3}), 0u);
}

TEST(LeakCounts, AnalyzeAndTheSessionShowTheLeakCountsAlike) {
  LeakTrace trace(false);
  const test::CliAndGui both = analyze_as_cli_and_gui(trace.path);
  ASSERT_TRUE(both.cli.error.empty() && both.session);
  const Analysis &cli = both.cli, &gui = both.gui();
  // Grouped by source (no symbols here: by address), as the report shows them.
  EXPECT_EQ(sites_of(cli), kSites);
  EXPECT_EQ(sites_of(gui), kSites);
  EXPECT_EQ(totals_of(cli), kTotals);
  EXPECT_EQ(totals_of(gui), kTotals);
  EXPECT_EQ(pools_of(gui), pools_of(cli));
}

}  // namespace
}  // namespace memtrail
