// The Histograms view against `memtrail report --json`'s histograms
// (size_bytes, lifetime_ns): one row per non-empty log2 bucket with its
// bounds, count and sum, for the whole trace and for a range
// (report --from --to); on samples/leaks and a synthesized trace whose sizes
// span 8 B to 16 KiB.
#include <QtTest>

#include "format.hpp"
#include "gui_traces.hpp"
#include "histogram_view.hpp"
#include "timeline_axis.hpp"

using namespace memtrail;
using namespace memtrail::gui;

namespace {

void checkAgainstReport(const HistogramView& v, const nlohmann::json& histograms) {
  QVERIFY(histograms.is_object());
  const char* names[2] = {"size_bytes", "lifetime_ns"};
  for (int h = 0; h < 2; ++h) {
    const nlohmann::json& buckets = histograms[names[h]];
    QCOMPARE(v.rowCount(h), static_cast<int>(buckets.size()));
    for (int row = 0; row < v.rowCount(h); ++row) {
      const nlohmann::json& b = buckets[static_cast<std::size_t>(row)];
      const std::uint64_t low = b["low"], count = b["count"], sum = b["sum"];
      QCOMPARE(Histogram::bucket_low(v.bucketOf(h, row)), low);
      QCOMPARE(v.cell(h, row, 0), h == 0 ? format_bytes(low) : format_time(low));
      QCOMPARE(v.cell(h, row, 2), countText(count));
      QCOMPARE(v.cell(h, row, 3), h == 0 ? bytesText(sum) : durationText(sum));
    }
  }
}

void checkTrace(const std::string& trace) {
  OpenResult r = Session::open(trace);
  QVERIFY2(r.session, r.message.c_str());
  const Analysis& a = r.session->whole();
  HistogramView v;
  v.setSession(r.session);
  v.setRange(a.summary.first_event_ns, a.summary.last_event_ns,
             std::shared_ptr<const Analysis>(&a, [](const Analysis*) {}));
  QVERIFY(v.rowCount(0) > 0);
  checkAgainstReport(v, test::reportJson(trace)["histograms"]);
  const std::uint64_t t0 = a.summary.first_event_ns + a.summary.duration_ns / 3;
  const std::uint64_t t1 = a.summary.first_event_ns + 2 * a.summary.duration_ns / 3;
  v.setRange(t0, t1, r.session->analyze_range(t0, t1));
  auto report = test::run_command(std::string(MEMTRAIL_BIN) + " report --json --top 0 --from " +
                                  std::to_string(t0) + " --to " + std::to_string(t1) + " " +
                                  test::shell_quote(trace));
  QCOMPARE(report.exit_code, 0);
  checkAgainstReport(v, nlohmann::json::parse(report.out)["histograms"]);
}

}  // namespace

class HistogramViewTest : public QObject {
  Q_OBJECT

 private slots:
  void leaksSampleEqualsReport() {
    QVERIFY(!test::leaksTrace().empty());
    checkTrace(test::leaksTrace());
  }
  void synthesizedSizesEqualReport() { checkTrace(test::synthesizedTrace("hist.mtr", 20000)); }
};

QTEST_MAIN(HistogramViewTest)
#include "histogram_view_test.moc"
