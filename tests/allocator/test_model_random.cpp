// Randomized replays against a model of PyTorch's caching allocator (by
// default the project's oracle, oracle/caching_model.py, run by python3
// through model_driver.py): thousands of operations per seed and configuration,
// compared step by step on allocated / reserved / requested / segments /
// inactive_split / inactive_split_bytes.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "memtrail/alloc/replay.hpp"
#include "test_util.hpp"

namespace {

using memtrail::test::shell_quote;
using memtrail::test::TempDir;
using nlohmann::json;
namespace alloc = memtrail::alloc;

constexpr std::uint64_t kMiB = 1ull << 20;

bool exists(const std::string& path) {
  struct stat st;
  return !path.empty() && ::stat(path.c_str(), &st) == 0;
}

// A workload that mixes small, medium, large and huge requests with frees
// and the occasional empty_cache; `stats` after every operation.
std::string random_script(std::uint64_t seed, int ops) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](std::uint64_t lo, std::uint64_t hi) { return lo + rng() % (hi - lo + 1); };
  std::vector<int> live;
  int next_name = 0;
  std::ostringstream s;
  for (int i = 0; i < ops; ++i) {
    const std::uint64_t dice = uniform(0, 999);
    if (dice < 8) {
      s << "empty_cache\n";
    } else if (live.empty() || (dice < 560 && live.size() < 300)) {
      std::uint64_t size;
      const std::uint64_t kind = uniform(0, 99);
      if (kind < 2)
        size = 0;
      else if (kind < 40)
        size = uniform(1, kMiB + 4096);
      else if (kind < 70)
        size = uniform(kMiB, 10 * kMiB + 4096);
      else if (kind < 95)
        size = uniform(10 * kMiB - 4096, 64 * kMiB);
      else
        size = uniform(64 * kMiB, 300 * kMiB);
      if (uniform(0, 9) == 0) size = size / 512 * 512;  // exact multiples hit the boundaries
      s << "b" << next_name << " = malloc " << size << "\n";
      live.push_back(next_name++);
    } else {
      const std::size_t pick = uniform(0, live.size() - 1);
      s << "free b" << live[pick] << "\n";
      live[pick] = live.back();
      live.pop_back();
    }
    s << "stats\n";
  }
  return s.str();
}

class Collect final : public alloc::ReplaySink {
 public:
  std::vector<std::map<std::string, std::int64_t>> lines;
  void on_stats(const alloc::ReplayOp&, const std::map<std::string, std::int64_t>& s) override {
    lines.push_back(s);
  }
  void on_oom(const alloc::ReplayOp&, const std::string& m) override { ADD_FAILURE() << m; }
};

class ModelAgreement : public ::testing::TestWithParam<const char*> {};

TEST_P(ModelAgreement, StepByStep) {
  const std::string python = MEMTRAIL_PYTHON3, model = MEMTRAIL_CACHING_MODEL;
  if (!exists(python)) GTEST_SKIP() << "python3 not found: cannot run the caching model";
  ASSERT_TRUE(exists(model)) << "caching model not found at " << model
                             << " (configure with -DMEMTRAIL_CACHING_MODEL=PATH)";
  const std::string conf = GetParam();
  const char* keys[] = {"allocated_bytes.all.current", "reserved_bytes.all.current",
                        "requested_bytes.all.current", "segment.all.current",
                        "inactive_split.all.current",  "inactive_split_bytes.all.current"};
  for (std::uint64_t seed : {11u, 2024u}) {
    SCOPED_TRACE("conf '" + conf + "', seed " + std::to_string(seed));
    TempDir dir;
    const std::string text = random_script(seed * 7919 + conf.size(), 2500);
    const std::string path = dir.file("random.txt", text);
    auto model_run = memtrail::test::run_command(python + " " + shell_quote(MEMTRAIL_MODEL_DRIVER) +
                                                 " " + shell_quote(model) + " " +
                                                 shell_quote(path) + " " + shell_quote(conf));
    ASSERT_EQ(model_run.exit_code, 0) << model_run.err;
    const auto expected = model_run.out_lines();

    std::istringstream in(text);
    auto script = alloc::ReplayScript::parse(in, "random.txt");
    alloc::ReplayOptions options;
    options.conf = conf;
    Collect got;
    alloc::run_replay(script, options, &got);
    ASSERT_EQ(got.lines.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const json want = json::parse(expected[i]);
      for (const char* key : keys) {
        ASSERT_EQ(got.lines[i].at(key), want.at(key).get<std::int64_t>())
            << key << " after operation " << i + 1;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, ModelAgreement,
                         ::testing::Values("", "max_split_size_mb:20", "max_split_size_mb:64",
                                           "roundup_power2_divisions:4",
                                           "roundup_power2_divisions:[1:2,2:4,8:8,>:2]",
                                           "max_split_size_mb:40,roundup_power2_divisions:[1:"
                                           "4,16:2,>:1]"));

}  // namespace
