// The metrics that moved out of the Engine onto trackers of the analysis
// pass (analyzer/src/trackers/): each is computed by its tracker alone (an
// Engine without it leaves the metric empty), and analyze() (the CLI's
// report and JSON) and Session::open (the GUI's whole()) show it alike.
#include <memory>
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "engine.hpp"
#include "memtrail/analysis.hpp"
#include "memtrail/workspaces.hpp"
#include "session_test_util.hpp"
#include "trackers/trackers.hpp"

namespace memtrail {
namespace {

AnalysisOptions no_symbols() {
  AnalysisOptions o;
  o.symbolize = false;
  o.symbol_cache = false;
  return o;
}

// The session trace with a second sample, a user mark and the recorder's
// own marks: attach at the start, a loss, the ending signal last.
struct TrackersTrace {
  TrackersTrace() : b(test::temp_trace("trackers.mtr")) {
    test::write_session_trace(b);
    b.sample(5000, 30000, 400, 6000);  // a bucket of its own (1 us)
    b.mark(5100, 20, "phase two");
    mark(5200, MarkDetail::attach, 21, "attached to 1234", 1234, 0);
    mark(5300, MarkDetail::lost, 22, "before start-up: early buffer full", 5,
         static_cast<std::uint64_t>(LostReason::before_startup));
    mark(5400, MarkDetail::lost, 22, "before start-up: early buffer full", 2,
         static_cast<std::uint64_t>(LostReason::before_startup));
    mark(5500, MarkDetail::signal, 23, "SIGTERM", 15, 0);
    path = b.finish();
  }
  void mark(std::uint64_t t, MarkDetail detail, std::uint32_t string_id, const std::string& text,
            std::uint64_t size, std::uint64_t requested) {
    b.writer().add_string(string_id, text);
    Event e;
    e.time_ns = t;
    e.kind = EventKind::mark;
    e.thread = 1;
    e.detail = static_cast<std::uint8_t>(detail);
    e.aux = string_id;
    e.size = size;
    e.requested = requested;
    b.writer().add_event(e);
  }
  test::TraceBuilder b;
  std::string path;
};

// The Engine's own pass over `path` (its block trackers' figures included:
// the pass-level trackers read them, a workspace's peak among them), with
// `tracker` plugged in as the analysis pass plugs it (null: the Engine
// alone).
Analysis engine_pass(const std::string& path, detail::PassTracker* tracker) {
  Analysis a;
  a.path = path;
  detail::Engine engine(no_symbols(), {});
  TraceVisitor* visitor = &engine;
  if (tracker) {
    tracker->attach(engine);
    visitor = &tracker->wrap(engine);
  }
  TraceReader reader(path);
  EXPECT_TRUE(reader.read(*visitor).ok);
  engine.finish(a);
  engine.block_trackers().finish(a);
  if (tracker) tracker->finished(a);
  return a;
}

TEST(Trackers, TheSamplesAreTheSamplesTrackersAlone) {
  TrackersTrace trace;
  const Analysis alone = engine_pass(trace.path, nullptr);
  EXPECT_EQ(alone.summary.samples, 0u);
  EXPECT_EQ(alone.summary.peak_rss_bytes, 0u);
  EXPECT_TRUE(alone.samples.rss.value.empty());

  const auto tracker = detail::make_samples_tracker(no_symbols());
  const Analysis a = engine_pass(trace.path, tracker.get());
  EXPECT_EQ(a.summary.samples, 2u);
  EXPECT_EQ(a.summary.peak_rss_bytes, 30000u);
  // Each series holds the first sample's value until the second's bucket.
  for (const auto& [series, first, last] :
       {std::tuple{&a.samples.rss, 10000u, 30000u}, std::tuple{&a.samples.heap_used, 100u, 400u},
        std::tuple{&a.samples.heap_reserved, 5000u, 6000u}}) {
    ASSERT_GE(series->value.size(), 2u);
    EXPECT_EQ(series->value.front(), first);
    EXPECT_EQ(series->value.back(), last);
  }
}

TEST(Trackers, TheMarksAreTheMarksTrackersAlone) {
  TrackersTrace trace;
  EXPECT_TRUE(engine_pass(trace.path, nullptr).marks.empty());

  const auto tracker = detail::make_marks_tracker(no_symbols());
  const Analysis a = engine_pass(trace.path, tracker.get());
  // The user's mark and the attach mark; a loss and the signal are not marks.
  ASSERT_EQ(a.marks.size(), 2u);
  EXPECT_EQ(a.marks[0].time_ns, 5100u);
  EXPECT_EQ(a.marks[0].text, "phase two");
  EXPECT_EQ(a.marks[1].text, "attached to 1234");

  AnalysisOptions one = no_symbols();
  one.max_marks = 1;
  const auto capped = detail::make_marks_tracker(one);
  EXPECT_EQ(engine_pass(trace.path, capped.get()).marks.size(), 1u);
}

TEST(Trackers, TheRunsEndIsTheRunEndTrackersAlone) {
  TrackersTrace trace;
  const Analysis alone = engine_pass(trace.path, nullptr);
  EXPECT_FALSE(alone.attached);
  EXPECT_TRUE(alone.lost_events.empty());
  EXPECT_EQ(alone.ended_by_signal, 0);

  const auto tracker = detail::make_run_end_tracker(no_symbols());
  const Analysis a = engine_pass(trace.path, tracker.get());
  EXPECT_TRUE(a.attached);
  ASSERT_EQ(a.lost_events.size(), 1u);  // the two losses of one reason, summed
  EXPECT_EQ(a.lost_events[0].reason, LostReason::before_startup);
  EXPECT_EQ(a.lost_events[0].words, "before start-up: early buffer full");
  EXPECT_EQ(a.lost_events[0].count, 7u);
  EXPECT_EQ(a.ended_by_signal, 15);
  EXPECT_EQ(a.ended_by_signal_name, "SIGTERM");
}

TEST(Trackers, TheOomsAreTheOomsTrackersAlone) {
  TrackersTrace trace;
  const Analysis alone = engine_pass(trace.path, nullptr);
  ASSERT_TRUE(alone.pool_by_name("cache"));
  EXPECT_EQ(alone.pool_by_name("cache")->ooms, 0u);

  const auto tracker = detail::make_ooms_tracker(no_symbols());
  const Analysis a = engine_pass(trace.path, tracker.get());
  ASSERT_TRUE(a.pool_by_name("cache"));
  EXPECT_EQ(a.pool_by_name("cache")->ooms, 1u);  // t800, requested 3000
  EXPECT_EQ(a.pool_by_name("malloc")->ooms, 0u);

  // Outside the range, an oom counts for nothing.
  AnalysisOptions before = no_symbols();
  before.to_ns = 700;
  const auto ranged = detail::make_ooms_tracker(before);
  detail::Engine engine(before, {});
  ranged->attach(engine);
  TraceReader reader(trace.path);
  ASSERT_TRUE(reader.read(engine).ok);
  Analysis r;
  engine.finish(r);
  ranged->finished(r);
  ASSERT_TRUE(r.pool_by_name("cache"));
  EXPECT_EQ(r.pool_by_name("cache")->ooms, 0u);
}

// samples/workspaces traced (tests/analyzer/golden/samples).
const std::string kWorkspacesTrace =
    std::string(MEMTRAIL_TEST_DIR) + "/golden/samples/workspaces.mtr";

TEST(Trackers, TheWorkspacesAreTheWorkspacesTrackersAlone) {
  EXPECT_TRUE(engine_pass(kWorkspacesTrace, nullptr).workspaces.empty());

  const auto tracker = detail::make_workspaces_tracker(no_symbols());
  const Analysis a = engine_pass(kWorkspacesTrace, tracker.get());
  ASSERT_FALSE(a.workspaces.empty());
  EXPECT_GT(a.workspaces[0].cycles, 0u);
  EXPECT_GT(a.workspaces[0].allocations, 0u);
  // The same figures as analyze()'s, which runs it among the pass's own
  // (its spill sites have frames there: the sites are grouped).
  const Analysis full = analyze(kWorkspacesTrace, no_symbols());
  ASSERT_EQ(full.workspaces.size(), a.workspaces.size());
  const WorkspaceReport &x = a.workspaces[0], &y = full.workspaces[0];
  EXPECT_EQ(x.cycles, y.cycles);
  EXPECT_EQ(x.spills, y.spills);
  EXPECT_EQ(x.spill_sites.size(), y.spill_sites.size());
  EXPECT_EQ(x.system_allocations_after_learning, y.system_allocations_after_learning);
  EXPECT_EQ(x.peak_used_bytes, y.peak_used_bytes);
}

// The scope a workspace's spills and resets name (the sample's LOOP).
const ScopeStats* spilling_scope(const Analysis& a) {
  for (const ScopeStats& s : a.scopes)
    if (s.spills > 0 || s.workspace_resets > 0) return &s;
  return nullptr;
}

TEST(Trackers, TheScopesSpillsAreTheScopeSpillsTrackersAlone) {
  EXPECT_EQ(spilling_scope(engine_pass(kWorkspacesTrace, nullptr)), nullptr);

  const auto tracker = detail::make_scope_spills_tracker(no_symbols());
  const Analysis a = engine_pass(kWorkspacesTrace, tracker.get());
  const ScopeStats* s = spilling_scope(a);
  ASSERT_TRUE(s);
  // The workspace's own count of its spills (workspaces.cpp), over the same events.
  const Analysis full = analyze(kWorkspacesTrace, no_symbols());
  ASSERT_FALSE(full.workspaces.empty());
  EXPECT_EQ(s->spills, full.workspaces[0].spills);
  EXPECT_EQ(s->spilled_bytes, full.workspaces[0].spilled_bytes);
  EXPECT_GT(s->workspace_resets, 0u);
  const ScopeStats* in_full = spilling_scope(full);
  ASSERT_TRUE(in_full);
  EXPECT_EQ(in_full->info.name, s->info.name);
  EXPECT_EQ(in_full->spills, s->spills);
  EXPECT_EQ(in_full->workspace_resets, s->workspace_resets);
}

TEST(Trackers, AnalyzeAndTheSessionShowTheWorkspacesAlike) {
  const Analysis cli = analyze(kWorkspacesTrace, no_symbols());
  ASSERT_TRUE(cli.error.empty()) << cli.error;
  const auto session = test::open_session(kWorkspacesTrace);
  ASSERT_TRUE(session);
  ASSERT_FALSE(cli.workspaces.empty());
  EXPECT_FALSE(workspaces_text(cli).empty());
  EXPECT_EQ(workspaces_text(session->whole()), workspaces_text(cli));
  const ScopeStats *x = spilling_scope(cli), *y = spilling_scope(session->whole());
  ASSERT_TRUE(x && y);
  EXPECT_EQ(y->spills, x->spills);
  EXPECT_EQ(y->workspace_resets, x->workspace_resets);
}

TEST(Trackers, AnalyzeAndTheSessionShowEveryTrackersMetricAlike) {
  TrackersTrace trace;
  const Analysis cli = analyze(trace.path, no_symbols());
  ASSERT_TRUE(cli.error.empty()) << cli.error;
  const auto session = test::open_session(trace.path);
  ASSERT_TRUE(session);
  const Analysis& gui = session->whole();

  EXPECT_EQ(cli.summary.samples, 2u);
  EXPECT_EQ(gui.summary.samples, cli.summary.samples);
  EXPECT_EQ(gui.summary.peak_rss_bytes, cli.summary.peak_rss_bytes);
  EXPECT_EQ(gui.samples.rss.value, cli.samples.rss.value);
  EXPECT_EQ(gui.samples.rss.time_ns, cli.samples.rss.time_ns);

  ASSERT_EQ(cli.marks.size(), 2u);
  ASSERT_EQ(gui.marks.size(), cli.marks.size());
  for (std::size_t i = 0; i < cli.marks.size(); ++i)
    EXPECT_EQ(gui.marks[i].text, cli.marks[i].text);

  EXPECT_TRUE(cli.attached);
  EXPECT_EQ(gui.attached, cli.attached);
  EXPECT_EQ(cli.lost_event_count(), 7u);
  EXPECT_EQ(gui.lost_event_count(), cli.lost_event_count());
  EXPECT_EQ(cli.ended_by_signal_name, "SIGTERM");
  EXPECT_EQ(gui.ended_by_signal_name, cli.ended_by_signal_name);

  ASSERT_TRUE(cli.pool_by_name("cache") && gui.pool_by_name("cache"));
  EXPECT_EQ(cli.pool_by_name("cache")->ooms, 1u);
  EXPECT_EQ(gui.pool_by_name("cache")->ooms, cli.pool_by_name("cache")->ooms);
}

}  // namespace
}  // namespace memtrail
