// Golden numbers on traces the project's own samples produce under
// `memtrail run`: the analyzer end to end, with the real preload tracer.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "report_json_helpers.hpp"
#include "trace_builder.hpp"

namespace memtrail {
namespace {

using memtrail::test::site_stack;
using memtrail::test::stack_has;
using nlohmann::json;
using test::memtrail;
using test::shell_quote;
using test::temp_trace;

json traced_report(const std::string& program_and_args, const std::string& name) {
  std::string trace = temp_trace(name);
  auto run = memtrail("run -o " + shell_quote(trace) + " -- " + program_and_args);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  auto r = memtrail("report --json --top 0 " + shell_quote(trace));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::filesystem::remove_all(trace);  // the run directory `memtrail run -o` made
  return r.exit_code == 0 ? json::parse(r.out) : json();
}

// samples/leaks: the leaks its source documents, per class.
TEST(Samples, LeaksSampleIsClassifiedExactly) {
  json j = traced_report(MEMTRAIL_LEAKS_BIN, "leaks.mtr");
  ASSERT_FALSE(j.is_null());
  EXPECT_TRUE(j["leaks"]["classified"]);
  // 600 (3 mallocs) + 640 (calloc) + 5000 (realloc chain) + 256
  // (posix_memalign) + 200 (new[]) + 21 (strdup) + 32 (list head) + 2048 (4
  // threads x 512): 13 blocks.
  EXPECT_EQ(j["leaks"]["direct_bytes"], 8797);
  EXPECT_EQ(j["leaks"]["direct_blocks"], 13);
  EXPECT_EQ(j["leaks"]["indirect_bytes"], 288);  // 9 list nodes x 32
  EXPECT_EQ(j["leaks"]["indirect_blocks"], 9);
  EXPECT_EQ(j["summary"]["leaked_bytes"], 9085);
  EXPECT_EQ(j["summary"]["leaked_blocks"], 22);
  // Symbolized: each leak site names its function.
  std::uint64_t list_indirect = 0, thread_direct = 0;
  for (const auto& s : j["leaks"]["sites"]) {
    if (s["kind"] == "indirect" && stack_has(s["stack"], "leak_linked_list"))
      list_indirect += s["bytes"].get<std::uint64_t>();
    if (s["kind"] == "direct" && stack_has(s["stack"], "thread_leaker"))
      thread_direct += s["blocks"].get<std::uint64_t>();
  }
  EXPECT_EQ(list_indirect, 288u);
  EXPECT_EQ(thread_direct, 4u);
  // make_temporaries: exactly 25.
  std::uint64_t temps = 0;
  for (const auto& s : j["top_sites"]["temporaries"])
    if (stack_has(site_stack(j, s), "make_temporaries"))
      temps += s["temporaries"].get<std::uint64_t>();
  EXPECT_EQ(temps, 25u);
}

// samples/churn 20000: 2 threads x 10000 pairs; even allocations are freed
// at once (temporaries), odd ones 256 allocations later; 357 blocks /
// 570,752 B leaked.
TEST(Samples, ChurnSampleCountsAreExact) {
  json j = traced_report(std::string(MEMTRAIL_CHURN_BIN) + " 20000", "churn.mtr");
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["summary"]["leaked_blocks"], 357);
  EXPECT_EQ(j["summary"]["leaked_bytes"], 570752);
  EXPECT_EQ(j["leaks"]["direct_blocks"], 357);
  std::uint64_t calls = 0, temps = 0;
  for (const auto& s : j["top_sites"]["calls"])
    if (stack_has(site_stack(j, s), "leaf_alloc")) {
      calls += s["calls"].get<std::uint64_t>();
      temps += s["temporaries"].get<std::uint64_t>();
    }
  EXPECT_EQ(calls, 20000u + 357u);
  // 10000 even allocations, plus per thread the last odd one: the final
  // ring drain frees it before that thread allocates again.
  EXPECT_EQ(temps, 10000u + 2u);
}

}  // namespace
}  // namespace memtrail
