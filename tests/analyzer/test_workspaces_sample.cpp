// Golden numbers on samples/workspaces traced with `memtrail run`: the
// workspaces section of `report --json`, and the what-if replay of the same
// loop recorded without workspaces (`replay --allocator workspace`).
//
// The sample's arithmetic (see its header): 7 arrays per step, 5376 bytes at
// batch 8, 8192 bytes in the double step 5; learned 5376 + 30% = 6988 bytes;
// step 1 spills all 7 arrays (no buffer yet), step 5 spills dW1 (2048 bytes).
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "report_json_helpers.hpp"
#include "temp_dir.hpp"
#include "trace_builder.hpp"

namespace memtrail {
namespace {

using memtrail::test::stack_has;
using nlohmann::json;
using test::memtrail;
using test::shell_quote;
using test::temp_trace;

// A trace of the sample, removed with its run directory when done.
class SampleTrace {
 public:
  SampleTrace(const std::string& args, const std::string& name) : dir_(temp_trace(name)) {
    auto run = memtrail("run -o " + shell_quote(dir_) + " -- " + MEMTRAIL_WORKSPACES_BIN + args);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    if (std::filesystem::is_directory(dir_))
      for (const auto& f : std::filesystem::directory_iterator(dir_))
        if (f.path().extension() == ".mtr") file_ = f.path().string();
    EXPECT_FALSE(file_.empty()) << run.err;
  }
  ~SampleTrace() { std::filesystem::remove_all(dir_); }
  const std::string& file() const { return file_; }

 private:
  std::string dir_, file_;
};

json json_of(const test::CommandResult& r) {
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? json::parse(r.out) : json();
}

TEST(WorkspaceSample, ReportShowsLearningAndNoSystemAllocationAfterItButTheSpill) {
  SampleTrace trace("", "ws-sample");
  json j = json_of(memtrail("report --json --top 0 " + shell_quote(trace.file())));
  ASSERT_TRUE(j.contains("workspaces")) << j.dump();
  ASSERT_EQ(j["workspaces"].size(), 1u);
  const json& w = j["workspaces"][0];
  EXPECT_EQ(w["name"], "LOOP");
  EXPECT_EQ(w["cycles"], 8);
  EXPECT_EQ(w["learned_size"], 6988);
  EXPECT_EQ(w["learned_in_cycle"], 1);
  EXPECT_EQ(w["learn_events"], 1);
  EXPECT_EQ(w["allocations"], 56);
  EXPECT_EQ(w["reuses"], 48);  // 7 steps x 7 arrays, less the spilled dW1
  EXPECT_EQ(w["peak_cycle_bytes"], 8192);
  EXPECT_EQ(w["peak_reserved_bytes"], 6988);
  EXPECT_EQ(w["spills"], 8);
  EXPECT_EQ(w["spilled_bytes"], 5376 + 2048);
  EXPECT_EQ(w["cycles_after_learning"], 7);
  EXPECT_EQ(w["spills_after_learning"], 1);
  // After learning the loop body's only heap allocation is step 5's spill:
  // no allocation from the workspace manager, the buffers' checks or the
  // tracing itself.
  EXPECT_EQ(w["system_allocations_after_learning"], 1);
  EXPECT_EQ(w["cycles_with_system_allocations_after_learning"], 1);
  EXPECT_EQ(w["max_system_allocations_per_cycle_after_learning"], 1);
  // The spilling sites: dW1 (2048 B twice) is the largest, in train_step.
  ASSERT_EQ(w["spill_sites"].size(), 7u);
  EXPECT_EQ(w["spill_sites"][0]["bytes"], 4096);
  EXPECT_EQ(w["spill_sites"][0]["spills"], 2);
  EXPECT_TRUE(stack_has(w["spill_sites"][0]["stack"], "train_step"));
  // Analyzing the workspace pool alone still counts the heap allocations
  // made in its cycles.
  json only = json_of(memtrail("report --json --pool LOOP " + shell_quote(trace.file())));
  ASSERT_TRUE(only.contains("workspaces"));
  EXPECT_EQ(only["workspaces"][0]["system_allocations_after_learning"], 1);
  // The pool itself: the reuses and the learned buffer.
  for (const auto& p : j["pools"])
    if (p["name"] == "LOOP") {
      EXPECT_EQ(p["reuses"], 48);
    }
}

// Four steps stop before the double batch: once learned, the loop body makes
// no system allocation at all (the acceptance, from the trace).
TEST(WorkspaceSample, NoSystemAllocationAfterLearningWithoutTheOversizedStep) {
  SampleTrace trace(" 4", "ws-sample-4");
  json j = json_of(memtrail("report --json " + shell_quote(trace.file())));
  ASSERT_TRUE(j.contains("workspaces")) << j.dump();
  const json& w = j["workspaces"][0];
  EXPECT_EQ(w["cycles"], 4);
  EXPECT_EQ(w["learned_size"], 6988);
  EXPECT_EQ(w["cycles_after_learning"], 3);
  EXPECT_EQ(w["reuses"], 21);  // 3 steps x 7 arrays
  EXPECT_EQ(w["spills_after_learning"], 0);
  EXPECT_EQ(w["system_allocations_after_learning"], 0);
  EXPECT_EQ(w["cycles_with_system_allocations_after_learning"], 0);
}

TEST(WorkspaceSample, ReplayOfTheLoopWithoutWorkspacesPredictsTheLearnedSize) {
  SampleTrace real("", "ws-real");
  SampleTrace plain(" --no-workspace", "ws-plain");
  json report = json_of(memtrail("report --json " + shell_quote(real.file())));
  ASSERT_TRUE(report.contains("workspaces"));
  json r = json_of(memtrail("replay " + shell_quote(plain.file()) +
                            " --allocator workspace --iteration-mark step --json"));
  ASSERT_TRUE(r.contains("workspace_replay")) << r.dump();
  const json& w = r["workspace_replay"];
  // Same sizes, same rules: the prediction is exact (no rounding to explain,
  // every array is a multiple of 16 bytes).
  EXPECT_EQ(w["learned_size"], report["workspaces"][0]["learned_size"]);
  EXPECT_EQ(w["learned_size"], 6988);
  EXPECT_EQ(w["iterations_by"], "mark");
  EXPECT_EQ(w["iterations"], 8);
  EXPECT_EQ(w["allocations"], 56);
  EXPECT_EQ(w["bytes"], 7 * 5376 + 8192);
  EXPECT_EQ(w["learned_after_iteration"], 1);
  EXPECT_EQ(w["peak_iteration_bytes"], 8192);
  EXPECT_EQ(w["spills"], 8);
  EXPECT_EQ(w["spills_after_learning"], 1);
  EXPECT_EQ(w["iterations_after_learning"], 7);
  EXPECT_EQ(w["recorded_allocations_after_learning"], 49);
  EXPECT_EQ(w["system_allocations_after_learning"], 1);
  EXPECT_DOUBLE_EQ(w["removed_per_iteration"].get<double>(), 7.0 - 1.0 / 7.0);
  EXPECT_EQ(w["escaping_allocations"], 0);

  // The workspace trace replayed on itself, by scope entries: the same size.
  json self = json_of(memtrail("replay " + shell_quote(real.file()) +
                               " --allocator workspace --iteration-mark LOOP --pool LOOP --json"));
  EXPECT_EQ(self["workspace_replay"]["iterations_by"], "scope");
  EXPECT_EQ(self["workspace_replay"]["iterations"], 8);
  EXPECT_EQ(self["workspace_replay"]["learned_size"], 6988);
  // Of the recorded pool's allocations after learning only the spill was a
  // system allocation (an `alloc`; the 48 bumps are `reuse`s).
  EXPECT_EQ(self["workspace_replay"]["recorded_allocations_after_learning"], 1);
  EXPECT_EQ(self["workspace_replay"]["system_allocations_after_learning"], 1);

  // A STRICT workspace learns step 1's 5376 bytes exactly; in the double
  // step dh (at 5632) and dW1 (at 6144) do not fit, dW2 (at 4096) does.
  json strict = json_of(memtrail("replay " + shell_quote(plain.file()) +
                                 " --allocator workspace --iteration-mark step --json"
                                 " --conf policyAllocation:STRICT"));
  EXPECT_EQ(strict["workspace_replay"]["learned_size"], 5376);
  EXPECT_EQ(strict["workspace_replay"]["spills_after_learning"], 2);

  // Bad flags: one line naming the problem, exit 2.
  const std::string t = shell_quote(plain.file());
  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
           {t + " --allocator workspace", "needs --iteration-mark"},
           {t + " --iteration-mark step", "--iteration-mark is for --allocator workspace"},
           {t + " --allocator workspace --iteration-mark nope", "no scope or mark named 'nope'"},
           {t + " --allocator workspace --iteration-mark step --conf policySpill:SOMETIMES",
            "--conf: policySpill: unknown value 'SOMETIMES'"},
           {t + " --allocator workspace --iteration-mark step --pool nope", "no pool named 'nope'"},
           {t + " --allocator workspace --iteration-mark step --capacity 1G",
            "--capacity is not used"},
           {t + " --allocator workspace --iteration-mark ''", "needs a non-empty NAME"},
           {t + " --allocator pool", "unknown allocator 'pool'"}}) {
    auto bad = memtrail("replay " + args);
    EXPECT_EQ(bad.exit_code, 2) << args;
    EXPECT_NE(bad.err.find(says), std::string::npos) << args << ": " << bad.err;
    EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
  }
}

// The same loop from an MMAP workspace of 4 MiB under a 1 MiB RAM limit:
// the file's pages are not RAM, so it runs; its temp file is gone at exit.
// A RAM buffer of that size is refused with the limit's message.
TEST(WorkspaceSample, MmapWorkspaceLargerThanTheRamLimit) {
  test::TempDir dir("ws-mmap");
  ASSERT_FALSE(dir.path().empty());
  const std::string env = "MEMTRAIL_MAX_BYTES=1M MEMTRAIL_WORKSPACE_CONF=initialSize:4M,";
  auto mmap =
      test::run_command(env + "policyLocation:MMAP,policyLearning:NONE,tempFilePath:" + dir.path() +
                        " " + MEMTRAIL_WORKSPACES_BIN);
  EXPECT_EQ(mmap.exit_code, 0) << mmap.err;
  EXPECT_NE(mmap.out.find("workspaces: 8 steps (workspace LOOP)"), std::string::npos) << mmap.out;
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));  // the mapped file was removed
  auto ram =
      test::run_command(env + "policyLocation:RAM,policyLearning:NONE " + MEMTRAIL_WORKSPACES_BIN);
  EXPECT_EQ(ram.exit_code, 1);
  EXPECT_NE(ram.err.find("workspace [LOOP]: Can't allocate [HOST] memory for its buffer"),
            std::string::npos)
      << ram.err;
  EXPECT_NE(ram.err.find("MEMTRAIL_MAX_BYTES exceeded"), std::string::npos) << ram.err;
}

}  // namespace
}  // namespace memtrail
