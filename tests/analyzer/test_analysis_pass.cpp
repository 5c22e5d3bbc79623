// The analysis pass (analysis_pass.hpp) that analyze() and Session::open both
// run: a tracker plugged into it sees every record and each stage in order,
// its result is analyze()'s, and stop_on_error / cancel end it where they say.
#include "analysis_pass.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "memtrail/report_json.hpp"
#include "session_trace.hpp"

namespace memtrail {
namespace {

using detail::PassFailure;
using detail::PassOptions;

AnalysisOptions no_symbols() {
  AnalysisOptions o;
  o.symbolize = false;
  o.symbol_cache = false;
  return o;
}

// Counts the events on their way to the Engine and notes the hooks' order.
class CountingTracker final : public detail::PassTracker, public TraceVisitor {
 public:
  void attach(detail::Engine&) override { stages.push_back("attach"); }
  TraceVisitor& wrap(TraceVisitor& next) override {
    next_ = &next;
    return *this;
  }
  void finished(Analysis&) override { stages.push_back("finished"); }
  void symbolized(const Analysis& a) override {
    stages.push_back("symbolized");
    sites_before = a.sites.size();
  }
  void grouped(const Analysis&, const std::vector<std::uint32_t>* m) override {
    stages.push_back("grouped");
    if (m) merged = *m;
  }

  void on_header(const TraceHeader& h) override { next_->on_header(h); }
  void on_string(std::uint32_t id, std::string_view t) override { next_->on_string(id, t); }
  void on_module(const ModuleInfo& m) override { next_->on_module(m); }
  void on_thread(const ThreadInfo& t) override { next_->on_thread(t); }
  void on_pool(const PoolInfo& p) override { next_->on_pool(p); }
  void on_stack_node(const StackNode& n) override { next_->on_stack_node(n); }
  void on_scope(const ScopeInfo& s) override { next_->on_scope(s); }
  void on_event(const Event& e) override { on_events(&e, 1); }
  void on_events(const Event* e, std::size_t n) override {
    events += n;
    next_->on_events(e, n);
  }
  bool keep_going() override { return next_->keep_going(); }

  std::vector<std::string> stages;
  std::uint64_t events = 0;
  std::size_t sites_before = 0;
  std::vector<std::uint32_t> merged;

 private:
  TraceVisitor* next_ = nullptr;
};

PassFailure run(const std::string& path, PassOptions& o, Analysis& a) {
  TraceReader reader(path);
  return detail::run_analysis_pass(reader, path, o, a);
}

TEST(AnalysisPass, ATrackerSeesEveryEventAndEachStageInOrderAndChangesNothing) {
  test::TraceBuilder b(test::temp_trace("pass-tracker.mtr"));
  test::write_session_trace(b);
  const std::string& path = b.finish();
  CountingTracker tracker;
  PassOptions o;
  o.analysis = no_symbols();
  o.trackers.push_back(&tracker);
  Analysis a;
  ASSERT_EQ(run(path, o, a), PassFailure::none) << a.error;

  EXPECT_EQ(tracker.stages,
            (std::vector<std::string>{"attach", "finished", "symbolized", "grouped"}));
  EXPECT_EQ(tracker.events, a.read.events);
  EXPECT_GT(tracker.events, 10u);
  ASSERT_EQ(tracker.merged.size(), tracker.sites_before);
  for (std::uint32_t to : tracker.merged) EXPECT_LT(to, a.sites.size());
  // The tracker's visitor changes nothing: the report is analyze()'s.
  EXPECT_EQ(to_report_json(a).dump(), to_report_json(analyze(path, no_symbols())).dump());
}

TEST(AnalysisPass, ProgressRunsThroughTheStagesAndCancelsInAnyOfThem) {
  test::TraceBuilder b(test::temp_trace("pass-progress.mtr"));
  test::write_session_trace(b);
  const std::string& path = b.finish();
  for (LoadStage stop :
       {LoadStage::reading, LoadStage::finishing, LoadStage::symbolizing, LoadStage::done}) {
    std::vector<LoadStage> seen;
    PassOptions o;
    o.analysis = no_symbols();
    o.file_bytes = std::filesystem::file_size(path);
    o.progress = [&](LoadStage s, std::uint64_t, std::uint64_t) {
      seen.push_back(s);
      return s != stop;
    };
    Analysis a;
    EXPECT_EQ(run(path, o, a), PassFailure::cancelled) << stage_name(stop);
    ASSERT_FALSE(seen.empty());
    EXPECT_EQ(seen.back(), stop);
    EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end())) << stage_name(stop);
  }
}

// A cut copy of the golden trace, removed at the end of the test.
struct CutTrace {
  explicit CutTrace(const std::string& from) : path(test::temp_trace("pass-cut.mtr")) {
    std::ifstream in(from, std::ios::binary);
    std::string bytes{std::istreambuf_iterator<char>(in), {}};
    std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() * 2 / 3);
  }
  ~CutTrace() { std::filesystem::remove(path); }
  std::string path;
};

TEST(AnalysisPass, StopOnErrorEndsAtADamagedFileElseTheRestRunsOnWhatWasRead) {
  test::TraceBuilder b(test::temp_trace("pass-damaged.mtr"));
  test::write_session_trace(b);
  CutTrace cut(b.finish());
  for (bool stop : {true, false}) {
    CountingTracker tracker;
    PassOptions o;
    o.analysis = no_symbols();
    o.stop_on_error = stop;
    o.trackers.push_back(&tracker);
    Analysis a;
    const PassFailure f = run(cut.path, o, a);
    EXPECT_TRUE(f == PassFailure::truncated || f == PassFailure::corrupt) << int(f);
    EXPECT_FALSE(a.error.empty());
    EXPECT_EQ(a.error, analyze(cut.path, no_symbols()).error);
    if (stop)
      EXPECT_EQ(tracker.stages, std::vector<std::string>{"attach"});
    else
      EXPECT_EQ(tracker.stages.back(), "grouped");
  }
}

TEST(AnalysisPass, AHeaderErrorEndsThePassBeforeAnyTracker) {
  const std::string path = test::temp_trace("pass-header.mtr");
  std::ofstream(path, std::ios::binary) << "not a trace, only text, long enough for a header";
  CountingTracker tracker;
  PassOptions o;
  o.trackers.push_back(&tracker);
  Analysis a;
  EXPECT_EQ(run(path, o, a), PassFailure::header);
  std::filesystem::remove(path);
  EXPECT_TRUE(tracker.stages.empty());
  EXPECT_NE(a.error.find("not a memtrail trace"), std::string::npos) << a.error;
}

}  // namespace
}  // namespace memtrail
