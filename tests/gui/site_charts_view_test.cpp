// The Sites over time view (heaptrack_gui's Consumed / Allocations /
// Temporary charts) against the analyzer's CLI face, `memtrail export
// --format charts`, and `memtrail report --json`: every series' value in
// every bucket equals the export's; at the end of the trace each top site's
// consumed bytes, allocations and temporaries equal the report's per-site
// live_at_range_end_bytes, calls and temporaries (the same sites, in the
// report's order); a range charts the range's own top sites, as
// `export --from --to` does. On samples/leaks and on a synthesized trace of
// 64 stacks (more than the 10 charted: "other" holds the rest).
#include <QLineEdit>
#include <QtTest>

#include "format.hpp"
#include "gui_traces.hpp"
#include "memtrail/site_filter.hpp"
#include "site_charts_view.hpp"

using namespace memtrail;
using namespace memtrail::gui;

namespace {

nlohmann::json cli(const std::string& args) {
  auto r = test::run_command(std::string(MEMTRAIL_BIN) + " " + args);
  if (r.exit_code != 0) qWarning("memtrail %s failed: %s", args.c_str(), r.err.c_str());
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
}

std::string rangeArgs(std::uint64_t t0, std::uint64_t t1) {
  return " --from " + std::to_string(t0) + " --to " + std::to_string(t1) + " ";
}

// Shows [t0, t1] (its Analysis) with `cost` and waits for the chart.
bool showRange(SiteChartsView& v, const Session& s, ChartCost cost, std::uint64_t t0,
               std::uint64_t t1) {
  const Analysis& whole = s.whole();
  auto range = t0 == whole.summary.first_event_ns && t1 == whole.summary.last_event_ns
                   ? std::shared_ptr<const Analysis>(&whole, [](const Analysis*) {})
                   : s.analyze_range(t0, t1);
  v.setCost(cost);
  v.setRange(t0, t1, range);
  return QTest::qWaitFor([&] { return v.isReady(); }, 60000);
}

// The view's charts equal `export --format charts` of the same range and cost.
void checkAgainstExport(const SiteChartsView& v, const nlohmann::json& j) {
  const SiteCharts* c = v.charts();
  QVERIFY(c);
  QVERIFY2(c->error.empty(), c->error.c_str());
  QVERIFY(j.is_object());
  QCOMPARE(std::string(chart_cost_name(c->cost)), j["cost"].get<std::string>());
  QCOMPARE(c->time_ns, j["time_ns"].get<std::vector<std::uint64_t>>());
  QCOMPARE(c->step_ns, j["step_ns"].get<std::uint64_t>());
  QCOMPARE(c->series.size(), j["series"].size());
  QCOMPARE(v.legendRows(), static_cast<int>(c->series.size()));
  for (std::size_t i = 0; i < c->series.size(); ++i) {
    const SiteSeries& s = c->series[i];
    const nlohmann::json& e = j["series"][i];
    QCOMPARE(s.other, e["site"].is_null());
    if (!s.other) QCOMPARE(s.site.value, e["site"].get<std::uint32_t>());
    QCOMPARE(s.value, e["value"].get<std::vector<std::uint64_t>>());
    const std::uint64_t last = s.value.back();
    QCOMPARE(v.legendCell(static_cast<int>(i), 2),
             c->cost == ChartCost::consumed ? bytesText(last) : countText(last));
  }
}

// The last bucket of each top site equals report --json's figure for it.
void checkEndAgainstReport(const SiteChartsView& v, const nlohmann::json& report) {
  const SiteCharts* c = v.charts();
  QVERIFY(c);
  const char* list = c->cost == ChartCost::consumed      ? "peak"
                     : c->cost == ChartCost::allocations ? "calls"
                                                         : "temporaries";
  const char* field = c->cost == ChartCost::consumed      ? "live_at_range_end_bytes"
                      : c->cost == ChartCost::allocations ? "calls"
                                                          : "temporaries";
  const nlohmann::json& top = report["top_sites"][list];
  QCOMPARE(c->series.size(), std::min<std::size_t>(top.size(), 10) + 1);
  std::uint64_t total = 0;
  for (std::size_t i = 0; i + 1 < c->series.size(); ++i) {
    QCOMPARE(c->series[i].site.value, top[i]["site"].get<std::uint32_t>());
    QCOMPARE(c->series[i].value.back(), top[i][field].get<std::uint64_t>());
  }
  for (const SiteSeries& s : c->series) total += s.value.back();
  // Every series together: the process's figure.
  const nlohmann::json& summary = report["summary"];
  if (c->cost == ChartCost::allocations)
    QCOMPARE(total, summary["allocations"].get<std::uint64_t>());
  if (c->cost == ChartCost::temporary)
    QCOMPARE(total, summary["temporary_allocations"].get<std::uint64_t>());
}

}  // namespace

class SiteChartsViewTest : public QObject {
  Q_OBJECT

 private:
  void checkTrace(const std::string& trace) {
    OpenResult r = Session::open(trace);
    QVERIFY2(r.session, r.message.c_str());
    const Analysis& a = r.session->whole();
    const std::uint64_t first = a.summary.first_event_ns, last = a.summary.last_event_ns;
    SiteChartsView v;
    v.resize(1000, 700);
    v.show();  // the charts are computed while the tab is shown
    v.setSession(r.session);
    const nlohmann::json report = test::reportJson(trace);
    QVERIFY(report.is_object());
    for (ChartCost cost : {ChartCost::consumed, ChartCost::allocations, ChartCost::temporary}) {
      QVERIFY(showRange(v, *r.session, cost, first, last));
      const std::string name = chart_cost_name(cost);
      checkAgainstExport(
          v, cli("export --format charts --cost " + name + " " + test::shell_quote(trace)));
      checkEndAgainstReport(v, report);
      QVERIFY(v.heading().contains(cost == ChartCost::consumed      ? QStringLiteral("Consumed")
                                   : cost == ChartCost::allocations ? QStringLiteral("Allocations")
                                                                    : QStringLiteral("Temporary")));
    }
    // The middle third: the range's own top sites and counts.
    const std::uint64_t t0 = first + (last - first) / 3, t1 = first + 2 * (last - first) / 3;
    for (ChartCost cost : {ChartCost::allocations, ChartCost::consumed, ChartCost::temporary}) {
      QVERIFY(showRange(v, *r.session, cost, t0, t1));
      QCOMPARE(v.charts()->t0, t0);
      QCOMPARE(v.charts()->t1, t1);
      const std::string name = chart_cost_name(cost);
      checkAgainstExport(v, cli("export --format charts --cost " + name + rangeArgs(t0, t1) +
                                test::shell_quote(trace)));
      if (cost != ChartCost::consumed)  // consumed carries live bytes in from before t0
        checkEndAgainstReport(
            v, cli("report --json --top 0" + rangeArgs(t0, t1) + test::shell_quote(trace)));
    }
  }

 private slots:
  void leaksSampleEqualsExportAndReport() {
    QVERIFY(!test::leaksTrace().empty());
    checkTrace(test::leaksTrace());
  }

  // Filtered: the top sites among those with a matching frame, each series
  // equal to that site's in the unfiltered charts (`export --format charts
  // --top 250`, every site), and "other" the rest of the total.
  void aFilterChartsTheMatchingTopSites() {
    const std::string trace = test::leaksTrace();
    QVERIFY(!trace.empty());
    OpenResult r = Session::open(trace);
    QVERIFY2(r.session, r.message.c_str());
    const Analysis& a = r.session->whole();
    SiteChartsView v;
    v.resize(1000, 700);
    v.show();
    v.setSession(r.session);
    v.filter()->setText("LEAK_");  // any case: leak_calloc, leak_in_threads, ...
    for (ChartCost cost : {ChartCost::allocations, ChartCost::consumed}) {
      QVERIFY(showRange(v, *r.session, cost, a.summary.first_event_ns, a.summary.last_event_ns));
      const SiteCharts* c = v.charts();
      QVERIFY(c && c->error.empty());
      std::vector<SiteId> want;
      for (SiteId id : top_sites(a, chart_site_order(cost), 0))
        if (want.size() < SiteChartsView::kTopSites &&
            SiteFilter::search_box("leak_").matches(at(a.sites, id)))
          want.push_back(id);
      QVERIFY(want.size() >= 3);
      QCOMPARE(c->series.size(), want.size() + 1);
      const nlohmann::json all =
          cli("export --format charts --top 250 --cost " + std::string(chart_cost_name(cost)) +
              " " + test::shell_quote(trace));
      QVERIFY(all.is_object());
      QCOMPARE(c->time_ns, all["time_ns"].get<std::vector<std::uint64_t>>());
      std::vector<std::uint64_t> total(c->time_ns.size(), 0), charted(c->time_ns.size(), 0);
      for (const auto& e : all["series"]) {
        const auto value = e["value"].get<std::vector<std::uint64_t>>();
        for (std::size_t b = 0; b < total.size(); ++b) total[b] += value[b];
      }
      for (std::size_t i = 0; i < want.size(); ++i) {
        QCOMPARE(c->series[i].site.value, want[i].value);
        bool found = false;
        for (const auto& e : all["series"])
          if (!e["site"].is_null() && e["site"].get<std::uint32_t>() == want[i].value) {
            QCOMPARE(c->series[i].value, e["value"].get<std::vector<std::uint64_t>>());
            found = true;
          }
        QVERIFY2(found, "every site is in the export with --top 250");
        for (std::size_t b = 0; b < total.size(); ++b) charted[b] += c->series[i].value[b];
      }
      QVERIFY(c->series.back().other);
      for (std::size_t b = 0; b < total.size(); ++b)
        QCOMPARE(c->series.back().value[b], total[b] - charted[b]);
      QVERIFY2(v.heading().contains("LEAK_"), qPrintable(v.heading()));
    }
    v.setFilter({});
    QVERIFY(QTest::qWaitFor([&] { return v.isReady() && v.charts(); }, 60000));
    QCOMPARE(v.charts()->series.size(),
             std::min<std::size_t>(top_sites(a, chart_site_order(v.cost()), 0).size(), 10) + 1);
  }

  void manyStacksChartTenAndOther() {
    const std::string trace = test::synthesizedTrace("charts.mtr", 20000);
    checkTrace(trace);
    OpenResult r = Session::open(trace);
    QVERIFY(r.session);
    // Hidden, the view reads nothing; shown, it charts the range it was given.
    SiteChartsView v;
    v.setSession(r.session);
    const Analysis& a = r.session->whole();
    v.setCost(ChartCost::allocations);
    v.setRange(a.summary.first_event_ns, a.summary.last_event_ns,
               std::shared_ptr<const Analysis>(&a, [](const Analysis*) {}));
    QVERIFY(v.isReady());
    QVERIFY(!v.charts());
    v.show();
    QVERIFY(!v.isReady());
    QTRY_VERIFY_WITH_TIMEOUT(v.isReady(), 60000);
    QVERIFY(v.charts());
    QCOMPARE(v.charts()->series.size(), 11u);
    QVERIFY(v.charts()->series.back().other);
    QVERIFY(v.charts()->series.back().value.back() > 0);
    QCOMPARE(v.legendCell(10, 0), QStringLiteral("other sites"));
  }
};

QTEST_MAIN(SiteChartsViewTest)
#include "site_charts_view_test.moc"
