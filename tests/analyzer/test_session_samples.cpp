// The GUI's session on a traced program agrees with `report --json` where
// grouping and the heap's reserved bytes are concerned (issue 20): one site
// per source-level call site, not one per recorded stack.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>

#include "cli_runner.hpp"
#include "memtrail/session.hpp"
#include "temp_dir.hpp"

namespace memtrail {
namespace {

using nlohmann::json;
using test::memtrail;
using test::shell_quote;

// (kind, bytes, blocks) per innermost function, of the leak sites a report
// lists or a session's whole() holds.
using LeakKey = std::tuple<std::string, std::string, std::uint64_t, std::uint64_t>;

std::multiset<LeakKey> leak_keys(const json& report) {
  std::multiset<LeakKey> out;
  for (const auto& s : report["leaks"]["sites"])
    out.emplace(s["stack"][0]["function"], s["kind"], s["bytes"], s["blocks"]);
  return out;
}

std::multiset<LeakKey> leak_keys(const Analysis& a) {
  std::multiset<LeakKey> out;
  for (const LeakSite& ls : a.leaks.sites) {
    const Site& site = at(a.sites, ls.site);
    out.emplace(site.frames.empty() ? "" : site.frames[0].function, std::string(to_string(ls.kind)),
                ls.tally.bytes, ls.tally.blocks);
  }
  return out;
}

class SessionOnSample : public ::testing::Test {
 protected:
  void SetUp() override {
    auto r = memtrail("run -o " + shell_quote(run_) + " -- " MEMTRAIL_UNROLLED_BIN);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // `run -o` writes a run directory: the program's one trace is in it.
    for (const auto& entry : std::filesystem::directory_iterator(run_))
      if (entry.path().extension() == ".mtr") trace_ = entry.path().string();
    ASSERT_FALSE(trace_.empty());
    auto rep = memtrail("report --json --top 0 " + shell_quote(trace_));
    ASSERT_EQ(rep.exit_code, 0) << rep.err;
    report_ = json::parse(rep.out);
  }
  test::TempDir dir_{"session-sample"};
  std::string run_ = dir_.file("run");
  std::string trace_;
  json report_;
};

TEST_F(SessionOnSample, WholeTraceSitesAreGroupedAsTheReportGroupsThem) {
  OpenResult r = Session::open(trace_);
  ASSERT_TRUE(r.session) << r.message;
  const Analysis& a = r.session->whole();
  // The unrolled loop (3 x malloc) and the 4 threads are one site each.
  EXPECT_EQ(leak_keys(a), leak_keys(report_));
  std::size_t unrolled = 0;
  for (const LeakSite& ls : a.leaks.sites)
    if (at(a.sites, ls.site).frames[0].function == "(anonymous namespace)::leak_unrolled()") {
      ++unrolled;
      EXPECT_EQ(ls.tally.bytes, 600u);
      EXPECT_EQ(ls.tally.blocks, 3u);
    }
  EXPECT_EQ(unrolled, 1u);

  // A range over the whole trace groups the same way.
  auto range = r.session->analyze_range(0, kTimeMax);
  ASSERT_TRUE(range->error.empty()) << range->error;
  EXPECT_EQ(leak_keys(*range), leak_keys(report_));
}

TEST_F(SessionOnSample, HeapPoolReservedIsTheGlibcSamplesAsInTheReport) {
  OpenResult r = Session::open(trace_);
  ASSERT_TRUE(r.session) << r.message;
  const PoolStats* heap = r.session->whole().pool_by_name("malloc");
  ASSERT_NE(heap, nullptr);
  for (const auto& p : report_["pools"])
    if (p["name"] == "malloc") {
      EXPECT_GT(p["peak_reserved_bytes"].get<std::uint64_t>(), 0u);
      EXPECT_EQ(heap->peak_reserved_bytes, p["peak_reserved_bytes"].get<std::uint64_t>());
      EXPECT_EQ(heap->final_reserved_bytes, p["final_reserved_bytes"].get<std::uint64_t>());
    }
}

}  // namespace
}  // namespace memtrail
