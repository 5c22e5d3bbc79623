// The Engine's per-site record is one cache line (engine.hpp's SiteState,
// static_assert'ed there); the public Site is built at finish. These check
// what moved out of the record on the way: each site's bytes live at the
// range's end (kept beside the records, by site index, from the range's
// end) and its bytes at the peak, across more sites than one chunk of the
// store holds (1,024), with sites first seen after the range's end.
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

constexpr std::uint32_t kSites = 1500;
constexpr std::uint64_t kRangeEnd = 100000;

// Site s (stack s, 1 <= s <= kSites) allocates s bytes at t = 10 s; the
// even ones are freed at t = 20000 + 10 s, before the range's end (so the
// peak, at the last alloc, holds every site's bytes). After the end, site 1
// allocates again and a new site (stack kSites + 1) appears: neither counts.
// (The builder removes its file when it goes.)
struct SitesTrace {
  SitesTrace() : b(test::temp_trace("engine-sites.mtr")) {
    b.pool(1, "malloc", PoolKind::heap);
    for (std::uint32_t s = 1; s <= kSites + 1; ++s) b.stack(s, 0, 0x1000 * s);
    for (std::uint32_t s = 1; s <= kSites; ++s) b.alloc(10 * s, 1, 0x100000 + 0x100 * s, s, s);
    for (std::uint32_t s = 2; s <= kSites; s += 2) b.free(20000 + 10 * s, 1, 0x100000 + 0x100 * s);
    b.alloc(kRangeEnd + 10, 1, 0x900000, 4096, 1);
    b.alloc(kRangeEnd + 20, 1, 0x910000, 8192, kSites + 1);
    path = b.finish();
  }
  test::TraceBuilder b;
  std::string path;
};

using T = std::pair<std::uint64_t, std::uint64_t>;  // (bytes, blocks)

// stack -> (bytes live at the range's end, bytes at the peak)
std::map<std::uint32_t, std::pair<T, std::uint64_t>> by_stack(const Analysis& a) {
  std::map<std::uint32_t, std::pair<T, std::uint64_t>> out;
  for (const Site& s : a.sites)
    out[s.stack.value] = {{s.live_at_range_end.bytes, s.live_at_range_end.blocks}, s.peak_bytes};
  return out;
}

std::map<std::uint32_t, std::pair<T, std::uint64_t>> expected(bool with_late_site) {
  std::map<std::uint32_t, std::pair<T, std::uint64_t>> want;
  for (std::uint32_t s = 1; s <= kSites; ++s) want[s] = {s % 2 ? T{s, 1} : T{}, s};
  if (with_late_site) want[kSites + 1] = {T{}, 0};
  return want;
}

TEST(EngineSites, EachSiteKeepsItsBytesLiveAtTheRangesEndAndAtThePeak) {
  const SitesTrace trace;
  const std::string& path = trace.path;
  AnalysisOptions to_end = no_symbols();
  to_end.to_ns = kRangeEnd;
  const Analysis a = engine_pass(path, to_end);
  EXPECT_EQ(by_stack(a), expected(true));
  // The odd sites' bytes: 750^2.
  EXPECT_EQ(a.summary.live_at_range_end.bytes, 562500u);
  EXPECT_EQ(a.summary.live_at_range_end.blocks, 750u);
}

TEST(EngineSites, WithNoBlockLiveAtTheRangesEndNoSiteHasAny) {
  const SitesTrace trace;
  const std::string& path = trace.path;
  AnalysisOptions early = no_symbols();
  early.to_ns = 5;  // before the first alloc
  const Analysis a = engine_pass(path, early);
  for (const Site& s : a.sites) EXPECT_EQ(s.live_at_range_end, Tally{}) << s.stack.value;
}

TEST(EngineSites, AnalyzeAndTheSessionBuildTheSameSites) {
  const SitesTrace trace;
  const std::string& path = trace.path;
  const test::CliAndGui both = analyze_as_cli_and_gui(path);
  ASSERT_TRUE(both.cli.error.empty() && both.session);
  // The whole trace: site 1's late block and the late site are live at its end.
  auto want = expected(false);
  want[1].first = {1 + 4096, 2};
  want[kSites + 1] = {T{8192, 1}, 0};
  EXPECT_EQ(by_stack(both.cli), want);
  EXPECT_EQ(by_stack(both.gui()), want);
}

}  // namespace
}  // namespace memtrail
