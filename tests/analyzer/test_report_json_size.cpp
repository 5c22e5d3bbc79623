// report --json at any --top: its size grows with the sites it lists, not
// with events, and each frame is written once (the `frames` table), however
// many sites and lists name it. Repeating each site's frames inline made
// python3's 1,320 sites 53 MB of JSON and a 2.2M-event trace 9.9 GB.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "memtrail/analysis.hpp"
#include "memtrail/report_json.hpp"
#include "trace_builder.hpp"

namespace memtrail {
namespace {

using test::temp_trace;
using test::TraceBuilder;

constexpr std::uint32_t kDepth = 60;  // a shared chain of frames below every site

// `sites` distinct stacks (one leaf each over one shared chain of kDepth
// frames), each allocated and freed `pairs` times; the first site leaks one
// block (leak sites keep their frames inline: DESIGN.md's stable keys).
std::string report_of(std::uint32_t sites, std::uint32_t pairs) {
  TraceBuilder b(temp_trace("json-size-" + std::to_string(sites) + "-" + std::to_string(pairs)));
  b.pool(1, "malloc", PoolKind::heap);
  for (std::uint32_t d = 1; d <= kDepth; ++d) b.stack(d, d - 1, 0x100000 + d * 16);
  for (std::uint32_t s = 0; s < sites; ++s) b.stack(kDepth + 1 + s, kDepth, 0x900000 + s * 16);
  std::uint64_t t = 1;
  for (std::uint32_t p = 0; p < pairs; ++p)
    for (std::uint32_t s = 0; s < sites; ++s) {
      b.alloc(t++, 1, 0x10000000 + s * 64, 32 + s % 7, kDepth + 1 + s);
      b.free(t++, 1, 0x10000000 + s * 64);
    }
  b.alloc(t++, 1, 0x20000000, 32, kDepth + 1);
  AnalysisOptions options;
  options.symbolize = false;
  options.symbol_cache = false;
  Analysis a = analyze(b.finish(), options);
  EXPECT_TRUE(a.error.empty()) << a.error;
  EXPECT_EQ(a.sites.size(), sites);
  std::ostringstream out;
  write_report_json(out, a, 0);
  return out.str();
}

TEST(ReportJsonSize, EachFrameIsWrittenOnceAndSitesNameThemById) {
  nlohmann::json j = nlohmann::json::parse(report_of(50, 1));
  ASSERT_EQ(j["frames"].size(), kDepth + 50);  // every distinct frame, once
  ASSERT_EQ(j["top_sites"]["calls"].size(), 50u);
  for (const auto& site : j["top_sites"]["calls"]) {
    ASSERT_FALSE(site.contains("stack"));
    ASSERT_EQ(site["frames"].size(), kDepth + 1);
    // Innermost first: the site's own leaf, then the shared chain.
    EXPECT_EQ(j["frames"][site["frames"][1].get<std::size_t>()]["address"], 0x100000 + kDepth * 16);
  }
  EXPECT_EQ(j["leaks"]["sites"][0]["stack"].size(), kDepth + 1);  // DESIGN.md's stable keys
}

TEST(ReportJsonSize, GrowsWithSitesNotWithEventsOrRepeatedFrames) {
  const std::size_t base = report_of(200, 1).size();
  const std::size_t more_events = report_of(200, 20).size();
  const std::size_t more_sites = report_of(400, 1).size();
  // Twenty times the events: the same sites, numbers a few digits longer.
  EXPECT_LT(more_events, base * 21 / 20);
  EXPECT_LT(more_sites, base * 21 / 10);
  // Per site and list: its counters and kDepth + 1 frame ids, no frame
  // objects (each ~260 bytes: inline, this was ~16 KB per site and list).
  const std::size_t lists = 5;
  EXPECT_LT(base,
            200 * lists * (800 + (kDepth + 1) * 20) + (kDepth + 200) * 300 + (kDepth + 1) * 300)
      << "bytes per site: " << base / 200;
}

}  // namespace
}  // namespace memtrail
