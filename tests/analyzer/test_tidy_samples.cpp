// Golden numbers of samples/tidy under `memtrail run`: the forgotten
// dispose grows scope "step" by one [4,16] float32 output (256 B) per
// iteration at its softmax line and fails `check --max-scope-growth 0`; the
// steady loop does not; donation halves the tensor pool's peak; a plain
// loop marked with memtrail::mark("iter") grows 64 B per iteration at its
// `new`, seen through --iteration-mark.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "report_json_helpers.hpp"

#include "cli_runner.hpp"
#include "trace_builder.hpp"

namespace memtrail {
namespace {

using nlohmann::json;
using test::memtrail;
using test::shell_quote;

// A run directory for one traced program, removed at the end.
struct Traced {
  std::string dir;
  Traced(const std::string& program_and_args, const std::string& name)
      : dir(test::temp_trace(name)) {
    auto run = memtrail("run -q -o " + shell_quote(dir) + " -- " + program_and_args);
    EXPECT_EQ(run.exit_code, 0) << run.err;
  }
  ~Traced() { std::filesystem::remove_all(dir); }
  json report(const std::string& options = "") const {
    auto r = memtrail("report --json --top 0 " + options + " " + shell_quote(dir));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? json::parse(r.out) : json();
  }
};

const json* scope(const json& report, const std::string& name) {
  for (const auto& s : report["scopes"])
    if (s["name"] == name) return &s;
  return nullptr;
}

const json* pool(const json& report, const std::string& name) {
  for (const auto& p : report["pools"])
    if (p["name"] == name) return &p;
  return nullptr;
}

TEST(TidySamples, ForgottenDisposeGrowsStepAtTheSoftmaxLine) {
  Traced t(std::string(MEMTRAIL_TIDY_LOOP_BIN) + " forgot 20", "tidy-forgot");
  json j = t.report();
  const json* step = scope(j, "step");
  ASSERT_NE(step, nullptr) << j["scopes"].dump();
  EXPECT_EQ((*step)["kind"], "tidy");
  EXPECT_EQ((*step)["entries"], 20);
  EXPECT_EQ((*step)["bytes_escaped"], 20 * 256);
  EXPECT_DOUBLE_EQ((*step)["growth_per_entry_bytes"].get<double>(), 256.0);
  ASSERT_EQ((*step)["growth_sites"].size(), 1u);
  const json& g = (*step)["growth_sites"][0];
  EXPECT_DOUBLE_EQ(g["bytes_per_entry"].get<double>(), 256.0);
  EXPECT_EQ(g["live_bytes"], 20 * 256);
  const json top = memtrail::test::site_stack(j, g["site"])[0];
  EXPECT_NE(top["file"].get<std::string>().find("tidy_loop.cpp"), std::string::npos) << top;
  EXPECT_EQ(top["line"], MEMTRAIL_TIDY_SOFTMAX_LINE) << top;
  const json* score = scope(j, "score");
  ASSERT_NE(score, nullptr);
  EXPECT_EQ((*score)["growth_per_entry_bytes"], 0.0);  // its Sum is disposed

  auto check = memtrail("check " + shell_quote(t.dir) + " --max-scope-growth 0");
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
  EXPECT_NE(check.err.find("scope 'step' grows 256 bytes per iteration over 20 entries"),
            std::string::npos)
      << check.err;
  auto text = memtrail("report " + shell_quote(t.dir));
  EXPECT_NE(text.out.find("scope 'step' grows 256 bytes per iteration (tidy, 20 entries)"),
            std::string::npos)
      << text.out;
}

TEST(TidySamples, SteadyLoopEscapesButPassesTheGrowthGate) {
  Traced t(std::string(MEMTRAIL_TIDY_LOOP_BIN) + " steady 20", "tidy-steady");
  json j = t.report();
  const json* step = scope(j, "step");
  ASSERT_NE(step, nullptr);
  EXPECT_EQ((*step)["entries"], 20);
  EXPECT_EQ((*step)["bytes_escaped"], 20 * 256);      // the returned output...
  EXPECT_EQ((*step)["growth_per_entry_bytes"], 0.0);  // ...disposed each time
  EXPECT_TRUE((*step)["growth_sites"].empty());
  auto check = memtrail("check " + shell_quote(t.dir) + " --max-scope-growth 0");
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
}

TEST(TidySamples, DonationHalvesTheTensorPoolPeak) {
  Traced donating(std::string(MEMTRAIL_TIDY_LOOP_BIN) + " donate 8", "tidy-donate");
  Traced copying(std::string(MEMTRAIL_TIDY_LOOP_BIN) + " nodonate 8", "tidy-nodonate");
  const json with_report = donating.report(), without_report = copying.report();
  const json* with = pool(with_report, "tensors");
  const json* without = pool(without_report, "tensors");
  ASSERT_NE(with, nullptr);
  ASSERT_NE(without, nullptr);
  EXPECT_EQ((*with)["peak_used_bytes"], 256 * 256 * 4);
  EXPECT_EQ((*without)["peak_used_bytes"], 2 * 256 * 256 * 4);
  EXPECT_EQ((*with)["allocations"], 1);  // one buffer, donated 8 times
  EXPECT_EQ((*without)["allocations"], 9);
}

TEST(TidySamples, MarkedPlainLoopGrowsAtItsNew) {
  Traced t(std::string(MEMTRAIL_ITERATION_LEAK_BIN) + " 20", "iteration-leak");
  json j = t.report("--iteration-mark iter");
  const json* iter = scope(j, "iter");
  ASSERT_NE(iter, nullptr) << j["scopes"].dump();
  EXPECT_EQ((*iter)["kind"], "iteration");
  EXPECT_EQ((*iter)["entries"], 20);
  EXPECT_EQ((*iter)["bytes_escaped"], 20 * 64);
  EXPECT_DOUBLE_EQ((*iter)["growth_per_entry_bytes"].get<double>(), 64.0);
  ASSERT_EQ((*iter)["growth_sites"].size(), 1u);
  bool in_leak_one = false;
  for (const auto& f : memtrail::test::site_stack(j, (*iter)["growth_sites"][0]["site"]))
    in_leak_one |= f["function"].get<std::string>().find("leak_one") != std::string::npos;
  EXPECT_TRUE(in_leak_one) << (*iter)["growth_sites"][0].dump();
  auto check =
      memtrail("check " + shell_quote(t.dir) + " --iteration-mark iter --max-scope-growth 0");
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
}

}  // namespace
}  // namespace memtrail
