// The Scopes view against `memtrail report --json`'s scopes section on
// traces recorded at test time: samples/tidy's tidy-loop with a forgotten
// dispose (scope 'step' grows 256 B per entry at tidy_loop.cpp:28,
// samples/tidy/README.md), samples/workspaces (a workspace scope with resets
// and spills), a range of the tidy trace (report --from/--to), and
// samples/leaks, which has no scopes (the empty-state text).
#include <QLineEdit>
#include <QtTest>

#include "format.hpp"
#include "gui_traces.hpp"
#include "scopes_view.hpp"

using namespace memtrail;
using namespace memtrail::gui;

namespace {

std::shared_ptr<const Session> openSession(const std::string& path) {
  OpenResult r = Session::open(path);
  if (!r.session) qWarning("cannot open %s: %s", path.c_str(), r.message.c_str());
  return r.session;
}

nlohmann::json reportScopes(const std::string& trace, const std::string& range = {}) {
  auto r = test::run_command(std::string(MEMTRAIL_BIN) + " report --json --top 0 " + range + " " +
                             test::shell_quote(trace));
  if (r.exit_code != 0) qWarning("report failed: %s", r.err.c_str());
  return r.exit_code == 0 ? nlohmann::json::parse(r.out)["scopes"] : nlohmann::json();
}

QString growthText(double bytes) {
  return QStringLiteral("%1 B").arg(bytes, 0, 'f', 1);
}

// Every row, cell and growth site of `v` equals the report's scope list.
void checkAgainstReport(ScopesView& v, const nlohmann::json& scopes) {
  QVERIFY(scopes.is_array());
  QCOMPARE(v.rowCount(), static_cast<int>(scopes.size()));
  auto col = [](const char* name) { return ScopesView::columnIndex(name); };
  for (int i = 0; i < v.rowCount(); ++i) {
    const nlohmann::json& j = scopes[static_cast<std::size_t>(i)];
    const ScopeStats* sc = v.scope(i);
    QVERIFY(sc);
    QCOMPARE(sc->info.name, j["name"].get<std::string>());
    QCOMPARE(sc->entries, j["entries"].get<std::uint64_t>());
    QCOMPARE(sc->bytes_escaped, j["bytes_escaped"].get<std::uint64_t>());
    QCOMPARE(sc->max_escaped_per_entry, j["max_escaped_per_entry"].get<std::uint64_t>());
    QCOMPARE(sc->growth_per_entry_bytes, j["growth_per_entry_bytes"].get<double>());
    QCOMPARE(sc->live_bytes_at_end, j["live_bytes_at_end"].get<std::uint64_t>());
    QCOMPARE(sc->escaped_per_entry.value,
             j["escaped_per_entry"]["value"].get<std::vector<std::uint64_t>>());
    QCOMPARE(sc->escaped_per_entry.time_ns,
             j["escaped_per_entry"]["time_ns"].get<std::vector<std::uint64_t>>());
    QCOMPARE(v.cell(i, col("name")), QString::fromStdString(j["name"]));
    QCOMPARE(v.cell(i, col("kind")), QString::fromStdString(j["kind"]));
    QCOMPARE(v.cell(i, col("pool")), QString::fromStdString(j["pool"]));
    QCOMPARE(v.cell(i, col("entries")), countText(j["entries"]));
    QCOMPARE(v.cell(i, col("escaped")), bytesText(j["bytes_escaped"]));
    QCOMPARE(v.cell(i, col("max_escaped")), bytesText(j["max_escaped_per_entry"]));
    QCOMPARE(v.cell(i, col("growth")), growthText(j["growth_per_entry_bytes"]));
    QCOMPARE(v.cell(i, col("live_at_end")), bytesText(j["live_bytes_at_end"]));
    QCOMPARE(v.cell(i, col("resets")), countText(j["workspace_resets"]));
    QCOMPARE(v.cell(i, col("spills")), countText(j["spills"]));
    QCOMPARE(v.cell(i, col("spilled")), bytesText(j["spilled_bytes"]));
    v.selectRow(i);
    const nlohmann::json& sites = j["growth_sites"];
    QCOMPARE(v.siteCount(), static_cast<int>(sites.size()));
    for (int k = 0; k < v.siteCount(); ++k) {
      const nlohmann::json& g = sites[static_cast<std::size_t>(k)];
      QCOMPARE(v.siteCell(k, 0), "+" + growthText(g["bytes_per_entry"]));
      QCOMPARE(v.siteCell(k, 1), bytesText(g["live_bytes"]));
    }
  }
}

}  // namespace

class ScopesViewTest : public QObject {
  Q_OBJECT

 private:
  std::string tidyTrace() {
    static const std::string trace = test::only_trace(
        test::recordRun(std::string(MEMTRAIL_TIDY_LOOP_BIN) + " forgot 20", "tidy"));
    return trace;
  }

 private slots:
  void tidyLoopEqualsReport() {
    QVERIFY2(!tidyTrace().empty(), "memtrail run of tidy-loop forgot 20 failed");
    auto session = openSession(tidyTrace());
    QVERIFY(session);
    ScopesView v;
    v.setSession(session);
    QVERIFY(!v.showsEmptyState());
    checkAgainstReport(v, reportScopes(tidyTrace()));
    // The documented fact: 'step' grows 256 B per entry at tidy_loop.cpp:28.
    int step = -1;
    for (int i = 0; i < v.rowCount(); ++i)
      if (v.cell(i, 0) == "step") step = i;
    QVERIFY(step >= 0);
    v.selectRow(step);
    QCOMPARE(v.cell(step, ScopesView::columnIndex("growth")), QString("256.0 B"));
    QCOMPARE(v.cell(step, ScopesView::columnIndex("entries")), QString("20"));
    QVERIFY(v.siteCount() >= 1);
    QVERIFY2(v.siteCell(0, 2).contains("tidy_loop.cpp:28"), qPrintable(v.siteCell(0, 2)));
    QVERIFY(v.heading().contains("1 grow"));
  }

  // The filter keeps the scopes its text names or a growth site of which
  // has a matching frame (function, file or module, any case), and lists
  // only the matching sites of a scope it does not name.
  void filterKeepsScopesAndSitesThatMatch() {
    QVERIFY(!tidyTrace().empty());
    auto session = openSession(tidyTrace());
    QVERIFY(session);
    ScopesView v;
    v.setSession(session);
    const int rows = v.rowCount();
    int step = -1;
    for (int i = 0; i < rows; ++i)
      if (v.cell(i, 0) == "step") step = i;
    QVERIFY(step >= 0);
    QVERIFY2(rows >= 2, "tidy-loop has 'step' and a tidy scope");
    v.selectRow(step);
    const int step_sites = v.siteCount();
    QVERIFY(step_sites >= 1);

    v.filter()->setText("TIDY_LOOP.CPP");  // the file of step's growth site
    QVERIFY(!v.rowHidden(step));
    int shown = 0;
    for (int i = 0; i < rows; ++i) {
      if (v.rowHidden(i)) continue;
      ++shown;
      QVERIFY2(!v.scope(i)->growth_sites.empty(), qPrintable(v.cell(i, 0)));
    }
    QVERIFY2(shown < rows, "a scope that does not grow is filtered out");
    v.selectRow(step);
    QVERIFY(v.siteCount() >= 1);
    for (int i = 0; i < v.siteCount(); ++i)
      QVERIFY2(v.siteCell(i, 2).contains("tidy_loop.cpp"), qPrintable(v.siteCell(i, 2)));

    v.setFilter("no function is called this");
    for (int i = 0; i < rows; ++i) QVERIFY(v.rowHidden(i));
    QCOMPARE(v.siteCount(), 0);

    v.setFilter("step");  // names the scope: all its sites
    QVERIFY(!v.rowHidden(step));
    v.selectRow(step);
    QCOMPARE(v.siteCount(), step_sites);

    v.setFilter({});
    QCOMPARE(v.filter()->text(), QString());
    for (int i = 0; i < rows; ++i) QVERIFY(!v.rowHidden(i));
    QCOMPARE(v.rowCount(), rows);
  }

  void workspacesEqualReport() {
    const std::string trace = test::only_trace(test::recordRun(MEMTRAIL_WORKSPACES_BIN, "ws"));
    QVERIFY2(!trace.empty(), "memtrail run of samples/workspaces failed");
    auto session = openSession(trace);
    QVERIFY(session);
    ScopesView v;
    v.setSession(session);
    const nlohmann::json scopes = reportScopes(trace);
    checkAgainstReport(v, scopes);
    bool resets = false;
    for (const auto& s : scopes) resets = resets || s["workspace_resets"].get<std::uint64_t>() > 0;
    QVERIFY2(resets, "samples/workspaces: no workspace resets in the report");
  }

  // A range: the view shows the range's Analysis, as report --from/--to.
  void rangeEqualsReportFromTo() {
    QVERIFY(!tidyTrace().empty());
    auto session = openSession(tidyTrace());
    QVERIFY(session);
    const ScopeStats* step = nullptr;
    for (const ScopeStats& s : session->whole().scopes)
      if (s.info.name == "step") step = &s;
    QVERIFY(step && step->escaped_per_entry.time_ns.size() >= 4);
    // From an entry's end half way through to the trace's end: fewer entries.
    const auto& ends = step->escaped_per_entry.time_ns;
    const std::uint64_t t0 = ends[ends.size() / 2];
    const std::uint64_t t1 = session->whole().summary.last_event_ns;
    auto range = session->analyze_range(t0, t1);
    QVERIFY(range && range->error.empty());
    ScopesView v;
    v.setSession(session);
    v.setRange(t0, t1, range);
    const nlohmann::json scopes =
        reportScopes(tidyTrace(), "--from " + std::to_string(t0) + " --to " + std::to_string(t1));
    checkAgainstReport(v, scopes);
    QVERIFY(v.scope(0) && v.scope(0)->entries < 20);
  }

  void noScopesSaysHowToGetThem() {
    QVERIFY2(!test::leaksTrace().empty(), "memtrail run of samples/leaks failed");
    auto session = openSession(test::leaksTrace());
    QVERIFY(session);
    QVERIFY(reportScopes(test::leaksTrace()).empty());
    ScopesView v;
    v.setSession(session);
    QVERIFY(v.showsEmptyState());
    QCOMPARE(v.rowCount(), 0);
    QVERIFY2(v.heading().startsWith("No scopes"), qPrintable(v.heading()));
    QVERIFY(v.heading().contains("memtrail_scope_begin"));
    QVERIFY(v.isReady());
  }
};

QTEST_MAIN(ScopesViewTest)
#include "scopes_view_test.moc"
