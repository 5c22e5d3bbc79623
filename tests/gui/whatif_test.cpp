// The What-if view against `memtrail replay --json` on the same trace:
// samples/fragmentation (caching and BFC pools, recorded through
// MEMTRAIL_OUTPUT at test time) replayed through each policy, and
// samples/workspaces replayed through a workspace over its LOOP scope. The
// view's numbers come from the same library call as the CLI's
// (alloc::run_what_if), so they must be equal to the byte: the peaks, and
// every bucket of the replayed series the chart draws (`--series POINTS
// --range T0:T1` with the view's window, for the whole trace and a range);
// over the whole trace the series' highest bucket is the peak.
// The replay runs in the background: a large synthesized trace is replayed
// while the event loop keeps turning, and a replay can be cancelled.
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QtTest>

#include "format.hpp"
#include "gui_traces.hpp"
#include "whatif_model.hpp"
#include "whatif_view.hpp"

using namespace memtrail;
using namespace memtrail::gui;

namespace {

std::string recordSample(const char* program, const std::string& name) {
  const std::string path = test::guiTempDir() / name;
  auto r = test::run_command("MEMTRAIL_OUTPUT=" + test::shell_quote(path) + " " + program +
                             " >/dev/null");
  return r.exit_code == 0 ? path : std::string();
}

// `memtrail replay TRACE ... --json`: the summary object (null on failure),
// with the {"replay_series"} line under "series" when `series` asks for it.
nlohmann::json cliReplay(const std::string& trace, const WhatIfSpec& s,
                         const LevelSeries* series = nullptr) {
  std::string cmd = std::string(MEMTRAIL_BIN) + " replay " + test::shell_quote(trace) +
                    " --json --allocator " + s.allocator + " --pool " + test::shell_quote(s.pool);
  if (series)
    cmd += " --series " + std::to_string(series->points) + " --range " +
           std::to_string(series->t0) + ":" + std::to_string(series->t1);
  if (!s.conf.empty()) cmd += " --conf " + test::shell_quote(s.conf);
  if (s.capacity) cmd += " --capacity " + std::to_string(s.capacity);
  if (!s.mark.empty()) cmd += " --iteration-mark " + test::shell_quote(s.mark);
  auto r = test::run_command(cmd);
  if (r.exit_code != 0) {
    qWarning("%s: %s", cmd.c_str(), r.err.c_str());
    return {};
  }
  // OOM lines and the series come first; the summary is the last line.
  std::string out = r.out.substr(0, r.out.find_last_not_of('\n') + 1);
  auto j = nlohmann::json::parse(out.substr(out.rfind('\n') + 1));
  nlohmann::json summary =
      j.contains("replay_summary") ? j["replay_summary"] : j["workspace_replay"];
  if (series) {
    out.resize(out.rfind('\n'));
    auto line = nlohmann::json::parse(out.substr(out.rfind('\n') + 1));
    if (line.contains("replay_series")) summary["series"] = line["replay_series"];
  }
  return summary;
}

// The CLI's series has the view's window.
bool seriesEqual(const LevelSeries& s, const nlohmann::json& j, QString* why) {
  if (!j.is_object()) return *why = "no replay_series line", false;
  if (j["t0_ns"] != s.t0 || j["t1_ns"] != s.t1 || j["step_ns"] != s.step_ns ||
      j["points"] != s.points)
    return *why = QString::fromStdString("window differs: " + j.dump()), false;
  return true;
}

// The chart's series is the CLI's, bucket by bucket (null: no level yet).
bool bucketsEqual(const LevelSeries& s, const nlohmann::json& a, QString* why) {
  if (!a.is_array() || a.size() != s.max.size())
    return *why = QString("%1 buckets in the CLI, %2 in the view")
                      .arg(a.is_array() ? a.size() : 0)
                      .arg(s.max.size()),
           false;
  for (std::size_t i = 0; i < s.max.size(); ++i) {
    const bool same = s.has_data[i] ? a[i] == s.max[i] : a[i].is_null();
    if (!same)
      return *why = QString("bucket %1: CLI %2, view %3")
                        .arg(i)
                        .arg(QString::fromStdString(a[i].dump()))
                        .arg(s.has_data[i] ? QString::number(s.max[i]) : QString("none")),
             false;
  }
  return true;
}

std::shared_ptr<const Session> openSession(const std::string& path) {
  OpenResult r = Session::open(path);
  if (!r.session) qWarning("cannot open %s: %s", path.c_str(), r.message.c_str());
  return r.session;
}

// A view on `session` that replays `spec` at once; null when it never got ready.
std::unique_ptr<WhatIfView> replayInView(std::shared_ptr<const Session> session,
                                         const WhatIfSpec& spec) {
  auto view = std::make_unique<WhatIfView>();
  view->setPolicy(spec);
  view->setSession(session);
  if (view->isReady()) qWarning("the view was ready before its replay came back");
  if (!QTest::qWaitFor([&] { return view->isReady(); }, 30000)) return nullptr;
  return view;
}

}  // namespace

class WhatIfTest : public QObject {
  Q_OBJECT

 private slots:
  void policiesEqualCliReplay_data() {
    QTest::addColumn<QString>("spec");
    QTest::newRow("caching") << "caching;pool=caching pool";
    QTest::newRow("caching conf") << "caching;pool=caching pool;conf=max_split_size_mb:20";
    QTest::newRow("caching capacity") << "caching;pool=caching pool;capacity=268435456";
    QTest::newRow("bfc") << "bfc;pool=caching pool;conf=preallocate:False";
    QTest::newRow("bfc pool") << "bfc;pool=bfc pool";
    QTest::newRow("malloc") << "malloc;pool=bfc pool";
  }
  void policiesEqualCliReplay() {
    static const std::string trace = recordSample(MEMTRAIL_FRAGMENTATION_BIN, "whatif-frag.mtr");
    QVERIFY2(!trace.empty(), "samples/fragmentation under MEMTRAIL_OUTPUT failed");
    static auto session = openSession(trace);
    QVERIFY(session);
    QFETCH(QString, spec);
    std::string error;
    const auto s = parse_what_if_spec(spec.toStdString(), &error);
    QVERIFY2(s, error.c_str());
    const nlohmann::json cli = cliReplay(trace, *s);
    QVERIFY(cli.is_object());

    auto view = replayInView(session, *s);
    QVERIFY2(view, "the replay did not finish");
    const auto& r = view->model().result();
    QVERIFY(r);
    QVERIFY2(r->error.empty(), r->error.c_str());
    QCOMPARE(r->replay.ops, cli["ops"].get<std::uint64_t>());
    QCOMPARE(r->replay.mallocs, cli["mallocs"].get<std::uint64_t>());
    QCOMPARE(r->replay.frees, cli["frees"].get<std::uint64_t>());
    QCOMPARE(r->replay.ooms, cli["ooms"].get<std::uint64_t>());
    QCOMPARE(r->replay.peak_reserved, cli["peak_reserved_bytes"].get<std::uint64_t>());
    QCOMPARE(r->replay.peak_allocated, cli["peak_allocated_bytes"].get<std::uint64_t>());
    QCOMPARE(r->replay.peak_fragmentation, cli["peak_fragmentation_bytes"].get<std::uint64_t>());
    QCOMPARE(r->replay.final_reserved, cli["final_reserved_bytes"].get<std::uint64_t>());
    QCOMPARE(r->replay.final_allocated, cli["final_allocated_bytes"].get<std::uint64_t>());
    // Every bucket the chart draws is the CLI's.
    const nlohmann::json cli_series = cliReplay(trace, *s, &r->reserved)["series"];
    QString why;
    QVERIFY2(seriesEqual(r->reserved, cli_series, &why), qPrintable(why));
    QVERIFY2(bucketsEqual(r->reserved, cli_series["reserved"], &why), qPrintable(why));
    QVERIFY2(bucketsEqual(r->allocated, cli_series["allocated"], &why), qPrintable(why));
    QCOMPARE(r->reserved.t0, session->whole().summary.first_event_ns);
    QCOMPARE(r->reserved.t1, session->whole().summary.last_event_ns);
    // Over the whole trace the series' highest bucket is the replay's peak.
    QCOMPARE(r->reserved.peak(), cli["peak_reserved_bytes"].get<std::uint64_t>());
    QCOMPARE(r->allocated.peak(), cli["peak_allocated_bytes"].get<std::uint64_t>());
    // What the table and the chart show.
    QCOMPARE(view->cell(0, 2), bytesText(cli["peak_reserved_bytes"].get<std::uint64_t>()));
    QVERIFY(!view->chart().lines().empty());
    QVERIFY(view->chart().lines().back().name.startsWith("replayed reserved"));
  }

  void workspaceEqualsCliReplay_data() {
    QTest::addColumn<QString>("pool");
    QTest::newRow("LOOP") << "LOOP";
    QTest::newRow("heap") << "workspace manager heap";
  }
  void workspaceEqualsCliReplay() {
    static const std::string trace = recordSample(MEMTRAIL_WORKSPACES_BIN, "whatif-ws.mtr");
    QVERIFY2(!trace.empty(), "samples/workspaces under MEMTRAIL_OUTPUT failed");
    static auto session = openSession(trace);
    QVERIFY(session);
    QFETCH(QString, pool);
    WhatIfSpec s;
    s.allocator = "workspace";
    s.pool = pool.toStdString();
    s.mark = "LOOP";
    const nlohmann::json cli = cliReplay(trace, s);
    QVERIFY(cli.is_object());
    auto view = replayInView(session, s);
    QVERIFY2(view, "the replay did not finish");
    const auto& r = view->model().result();
    QVERIFY(r && r->workspace);
    QVERIFY2(r->error.empty(), r->error.c_str());
    const auto& w = r->workspace_result;
    QCOMPARE(w.iterations, cli["iterations"].get<std::uint64_t>());
    QCOMPARE(w.allocations, cli["allocations"].get<std::uint64_t>());
    QCOMPARE(w.bytes, cli["bytes"].get<std::uint64_t>());
    QCOMPARE(w.learned_size, cli["learned_size"].get<std::uint64_t>());
    QCOMPARE(w.learned_after_iteration, cli["learned_after_iteration"].get<std::uint64_t>());
    QCOMPARE(w.peak_iteration_bytes, cli["peak_iteration_bytes"].get<std::uint64_t>());
    QCOMPARE(w.spills, cli["spills"].get<std::uint64_t>());
    QCOMPARE(w.system_allocations_after_learning,
             cli["system_allocations_after_learning"].get<std::uint64_t>());
    QCOMPARE(w.recorded_per_iteration_after_learning(),
             cli["recorded_per_iteration"].get<double>());
    QCOMPARE(w.escaping_allocations, cli["escaping_allocations"].get<std::uint64_t>());
    // The workspace's buffer is reserved from the upstream: the series rises.
    QVERIFY(r->reserved.peak() >= w.learned_size);
    // Every bucket the chart draws is the CLI's; a workspace has no allocated line.
    const nlohmann::json cli_series = cliReplay(trace, s, &r->reserved)["series"];
    QString why;
    QVERIFY2(seriesEqual(r->reserved, cli_series, &why), qPrintable(why));
    QVERIFY2(bucketsEqual(r->reserved, cli_series["reserved"], &why), qPrintable(why));
    QVERIFY(!cli_series.contains("allocated"));
  }

  // A range: the replay is still of the whole trace (its peak is the CLI's),
  // and the chart's buckets are the range's, as `replay --json --series N
  // --range T0:T1` prints them.
  void rangeEqualsCliReplay() {
    const std::string trace = recordSample(MEMTRAIL_FRAGMENTATION_BIN, "whatif-range.mtr");
    QVERIFY2(!trace.empty(), "samples/fragmentation under MEMTRAIL_OUTPUT failed");
    auto session = openSession(trace);
    QVERIFY(session);
    std::string error;
    const auto s = parse_what_if_spec("caching;pool=caching pool", &error);
    QVERIFY2(s, error.c_str());
    auto view = replayInView(session, *s);
    QVERIFY2(view, "the replay did not finish");
    const Summary& whole = session->whole().summary;
    const std::uint64_t span = whole.last_event_ns - whole.first_event_ns;
    const std::uint64_t t0 = whole.first_event_ns + span / 4, t1 = t0 + span / 4;
    view->setRange(t0, t1, session->analyze_range(t0, t1));
    QVERIFY2(!view->isReady(), "the range started no replay");
    QVERIFY(QTest::qWaitFor([&] { return view->isReady(); }, 30000));
    const auto& r = view->model().result();
    QVERIFY(r);
    QVERIFY2(r->error.empty(), r->error.c_str());
    QCOMPARE(r->reserved.t0, t0);
    QCOMPARE(r->reserved.t1, t1);
    const nlohmann::json cli = cliReplay(trace, *s, &r->reserved);
    QVERIFY(cli.is_object());
    QCOMPARE(r->replay.peak_reserved, cli["peak_reserved_bytes"].get<std::uint64_t>());
    QString why;
    QVERIFY2(seriesEqual(r->reserved, cli["series"], &why), qPrintable(why));
    QVERIFY2(bucketsEqual(r->reserved, cli["series"]["reserved"], &why), qPrintable(why));
    QVERIFY2(bucketsEqual(r->allocated, cli["series"]["allocated"], &why), qPrintable(why));
  }

  // --series without a window covers the replayed events' least to most
  // time; its options are refused where they cannot apply (exit 2, one line).
  void cliSeriesOptions() {
    static const std::string trace = recordSample(MEMTRAIL_FRAGMENTATION_BIN, "whatif-frag3.mtr");
    QVERIFY(!trace.empty());
    const std::string replay = std::string(MEMTRAIL_BIN) + " replay " + test::shell_quote(trace) +
                               " --pool 'caching pool' ";
    auto r = test::run_command(replay + "--json --series 50");
    QCOMPARE(r.exit_code, 0);
    const auto series = nlohmann::json::parse(r.out.substr(0, r.out.find('\n')))["replay_series"];
    QVERIFY(series["t1_ns"].get<std::uint64_t>() > series["t0_ns"].get<std::uint64_t>());
    QCOMPARE(series["points"].get<std::size_t>(), std::size_t{50});
    // The first bucket holds the first op's level, the last one the final level.
    QVERIFY(!series["reserved"].front().is_null());
    const std::string script = test::writeFile("whatif.script", "A = malloc 1000\nfree A\n");
    const std::pair<std::string, std::string> refused[] = {
        {replay + "--series 50", "--series needs --json"},
        {replay + "--json --range 5:9", "--range is the window of --series"},
        {replay + "--json --series 0", "--series needs POINTS"},
        {replay + "--json --series 50 --range 9:5", "--range needs T0:T1"},
        {replay + "--json --series 50 --range 5", "--range needs T0:T1"},
        {std::string(MEMTRAIL_BIN) + " replay " + script + " --json --series 50",
         "--series needs a trace"},
    };
    for (const auto& [cmd, says] : refused) {
      auto e = test::run_command(cmd);
      QVERIFY2(e.exit_code == 2 && e.err.find(says) != std::string::npos &&
                   e.err.find('\n') == e.err.size() - 1,
               (cmd + ": " + e.err).c_str());
    }
  }

  void errorsAreShown() {
    static const std::string trace = recordSample(MEMTRAIL_FRAGMENTATION_BIN, "whatif-frag2.mtr");
    auto session = openSession(trace);
    QVERIFY(session);
    WhatIfSpec s;
    s.pool = "caching pool";
    s.conf = "max_split_size_mb:4";  // below PyTorch's 20 MB minimum
    auto view = replayInView(session, s);
    QVERIFY(view);
    QVERIFY(view->model().result() && !view->model().result()->error.empty());
    QVERIFY2(view->heading().contains("failed") && view->heading().contains("20"),
             qPrintable(view->heading()));
  }

  // The replay of a 4·10^6-event trace runs on a worker: start() returns at
  // once, the event loop turns while it runs, and finished() brings it back.
  void replayRunsInTheBackground() {
    const std::string trace = test::synthesizedTrace("whatif-big.mtr", 4'000'000);
    WhatIfModel model;
    QSignalSpy finished(&model, &WhatIfModel::finished);
    WhatIfSpec s;
    s.allocator = "malloc";
    s.pool = "malloc";
    QElapsedTimer clock;
    clock.start();
    model.start(trace, s, 0, 400'000'000, 500);
    const qint64 start_ms = clock.elapsed();
    QVERIFY(model.running());
    QVERIFY(!model.result());
    int turns = 0;  // event-loop turns while the replay runs
    while (finished.isEmpty() && clock.elapsed() < 60000) {
      QTest::qWait(5);
      ++turns;
    }
    QCOMPARE(finished.size(), 1);
    const qint64 total_ms = clock.elapsed();
    QVERIFY2(start_ms * 10 < total_ms,
             qPrintable(QString("start() took %1 of %2 ms").arg(start_ms).arg(total_ms)));
    QVERIFY2(turns > 3, qPrintable(QString("%1 event-loop turns").arg(turns)));
    QVERIFY(!model.running());
    QVERIFY(model.result() && model.result()->error.empty());
    QCOMPARE(model.result()->replay.mallocs, std::uint64_t{2'000'000});

    // Cancelled: no result, no finished(); a later start() still finishes.
    model.start(trace, s, 0, 400'000'000, 500);
    model.cancel();
    QVERIFY(!model.running() && !model.result());
    model.start(trace, s, 0, 400'000'000, 500);
    QVERIFY(QTest::qWaitFor([&] { return finished.size() == 2; }, 60000));
    QVERIFY(model.result() && !model.result()->cancelled);
  }

  // A level set before the range carries into it; the last one holds to t1.
  void levelBucketsCarryLevels() {
    LevelBuckets b(100, 199, 10);  // 10 buckets of 10 ns
    b.set(50, 7);                  // before the range
    b.set(125, 3);
    b.set(127, 9);
    b.set(160, 1);
    b.set(500, 100);  // after the range: not drawn
    const LevelSeries s = b.finish();
    QCOMPARE(s.max.size(), std::size_t{10});
    QCOMPARE(s.step_ns, std::uint64_t{10});
    QCOMPARE(s.max[0], std::uint64_t{7});
    QCOMPARE(s.max[1], std::uint64_t{7});
    QCOMPARE(s.max[2], std::uint64_t{9});  // 7 entering, then 3 and 9
    QCOMPARE(s.max[3], std::uint64_t{9});
    QCOMPARE(s.max[6], std::uint64_t{9});  // 9 entering, then 1
    QCOMPARE(s.max[7], std::uint64_t{1});
    QCOMPARE(s.max[9], std::uint64_t{1});
    QCOMPARE(s.peak(), std::uint64_t{9});
    LevelBuckets empty(0, 99, 10);
    const LevelSeries e = empty.finish();
    QCOMPARE(e.peak(), std::uint64_t{0});
    QVERIFY(std::all_of(e.has_data.begin(), e.has_data.end(), [](auto h) { return h == 0; }));
  }

  void policySpecs() {
    std::string error;
    auto s = parse_what_if_spec(
        "bfc;pool=caching pool;conf=preallocate:False,memory_fraction:0.5;"
        "capacity=8GiB",
        &error);
    QVERIFY2(s, error.c_str());
    QCOMPARE(s->allocator, std::string("bfc"));
    QCOMPARE(s->pool, std::string("caching pool"));
    QCOMPARE(s->conf, std::string("preallocate:False,memory_fraction:0.5"));
    QCOMPARE(s->capacity, std::uint64_t{8} << 30);
    QCOMPARE(parse_what_if_spec(what_if_spec_text(*s), &error), s);
    QVERIFY(!parse_what_if_spec("tcmalloc", &error));
    QVERIFY(error.find("unknown allocator") != std::string::npos);
    QVERIFY(!parse_what_if_spec("caching;pool", &error));
    QVERIFY(!parse_what_if_spec("caching;colour=red", &error));
    QVERIFY(!parse_what_if_spec("caching;capacity=0", &error));
    QVERIFY(!parse_what_if_spec("workspace;mark=LOOP;capacity=1GiB", &error));
  }
};

QTEST_MAIN(WhatIfTest)
#include "whatif_test.moc"
