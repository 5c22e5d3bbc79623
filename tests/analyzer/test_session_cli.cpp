// memtrail report TRACE --at TIME: the session's breakdown and segment map
// summary at a moment, text and JSON, and its errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "session_trace.hpp"

namespace memtrail {
namespace {

using test::TraceBuilder;

TEST(ReportAt, JsonHasTheBreakdownAndTheSegmentSummary) {
  TraceBuilder b(test::temp_trace("cli-at.mtr"));
  test::write_session_trace(b);
  const std::string& path = b.finish();
  auto r = test::memtrail("report " + path + " --at 450ns --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "memtrail.moment/1");
  EXPECT_EQ(j["time_ns"], 450);
  ASSERT_EQ(j["pools"].size(), 2u);
  EXPECT_EQ(j["pools"][0]["pool"], "malloc");
  EXPECT_EQ(j["pools"][0]["reserved_bytes"], 5000);
  EXPECT_EQ(j["pools"][0]["source"], "heap samples");
  const auto& cache = j["pools"][1];
  EXPECT_EQ(cache["reserved_bytes"], 6144);
  EXPECT_EQ(cache["used_bytes"], 1536);
  EXPECT_EQ(cache["cached_free_bytes"], 2048);
  EXPECT_EQ(cache["fragmented_bytes"], 2560);
  EXPECT_EQ(cache["segments"]["count"], 2);
  EXPECT_EQ(cache["segments"]["holding_live_blocks"], 1);
  EXPECT_EQ(cache["segments"]["live_blocks"], 2);
  EXPECT_EQ(cache["segments"]["inactive_split_bytes"], 2560);
  EXPECT_EQ(cache["segments"]["largest_free_bytes"], 2048);

  auto only = test::memtrail("report " + path + " --at 450 --pool cache");
  ASSERT_EQ(only.exit_code, 0) << only.err;
  EXPECT_NE(only.out.find("cache"), std::string::npos);
  EXPECT_EQ(only.out.find("malloc"), std::string::npos) << only.out;
  EXPECT_NE(only.out.find("2 segments (1 holding live blocks), 2 live blocks"), std::string::npos)
      << only.out;
}

TEST(ReportAt, BadTimeAndBadFileAreOneLineErrors) {
  auto bad = test::memtrail("report x.mtr --at soon");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--at"), std::string::npos) << bad.err;
  auto missing = test::memtrail("report /nonexistent/t.mtr --at 5");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("cannot open"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace memtrail
