// SummaryView's numbers and pies on samples/leaks traced at test time,
// against the sample's documented facts and `memtrail report --json`.
#include <QtTest>

#include "format.hpp"
#include "gui_traces.hpp"
#include "memtrail/session.hpp"
#include "summary_view.hpp"

using namespace memtrail;
using gui::SummaryView;

class SummaryViewTest : public QObject {
  Q_OBJECT

  std::shared_ptr<const Session> session_;
  nlohmann::json report_;

  std::shared_ptr<const Analysis> whole() const {
    return std::shared_ptr<const Analysis>(session_, &session_->whole());
  }

 private slots:
  void initTestCase() {
    std::string error;
    session_ = test::leaksSession(&error);
    QVERIFY2(session_, error.c_str());
    report_ = test::reportJson(test::leaksTrace());
    QVERIFY(!report_.is_null());
  }

  void keyNumbers() {
    SummaryView v;
    QSignalSpy ready(&v, &gui::SessionView::ready);
    v.setSession(session_);
    QVERIFY(!v.isReady());
    const Summary& s = session_->whole().summary;
    v.setRange(s.first_event_ns, s.last_event_ns, whole());
    // samples/leaks/README.md: 13 direct blocks of 8,797 B, 9 indirect of
    // 288 B, 27 temporaries (25 malloc/free pairs + 2 realloc moves).
    QCOMPARE(v.value("leaked-direct"), gui::bytesAndBlocks(8797, 13));
    QCOMPARE(v.value("leaked-indirect"), gui::bytesAndBlocks(288, 9));
    QCOMPARE(v.value("temporaries"), QString("27"));
    const auto& js = report_["summary"];
    QCOMPARE(v.value("allocations"), gui::countText(js["allocations"]));
    QCOMPARE(v.value("duration"), gui::durationText(js["duration_ns"]));
    QCOMPARE(v.value("peak-used"), QString("%1 at %2")
                                       .arg(gui::bytesText(js["peak_used_bytes"]),
                                            gui::durationText(js["peak_time_ns"])));
    const auto& jl = report_["leaks"];
    QCOMPARE(v.value("possible"), gui::bytesAndBlocks(jl["possible_bytes"], jl["possible_blocks"]));
    QCOMPARE(v.value("reachable"),
             gui::bytesAndBlocks(jl["reachable_bytes"], jl["reachable_blocks"]));
    QVERIFY(v.value("processes").startsWith("1 ("));
    // The pies come from Session::breakdown at the peak, off the GUI thread.
    QVERIFY(ready.wait(10000) || v.isReady());
    QVERIFY(v.isReady());
    QCOMPARE(v.moment(), std::uint64_t(js["peak_time_ns"]));
    QVERIFY2(v.momentText().contains("peak used"), qPrintable(v.momentText()));
    QStringList titles = v.pieTitles();
    QVERIFY2(titles.filter("malloc").size() == 1, qPrintable(titles.join(" | ")));
    // A pool holding nothing at the moment gets no empty pie: it is named
    // beneath them. At samples/leaks' peak the mmap pool has nothing mapped.
    std::vector<PoolBreakdown> at_peak = session_->breakdown(v.moment());
    QStringList idle;
    for (const PoolBreakdown& p : at_peak)
      if (p.reserved == 0 && p.used == 0) idle << QString::fromStdString(p.name);
    QVERIFY(idle.contains("mmap"));
    QCOMPARE(v.idlePools(), idle);
    for (const QString& name : idle) QVERIFY(titles.filter(name).isEmpty());
  }

  void followsTheMoment() {
    SummaryView v;
    v.setSession(session_);
    const Summary& s = session_->whole().summary;
    v.setRange(s.first_event_ns, s.last_event_ns, whole());
    QTRY_VERIFY_WITH_TIMEOUT(v.isReady(), 10000);
    v.setMoment(s.first_event_ns);
    QVERIFY(!v.isReady());
    QTRY_VERIFY_WITH_TIMEOUT(v.isReady(), 10000);
    QCOMPARE(v.moment(), s.first_event_ns);
    QVERIFY(v.momentText().contains("chosen moment"));
  }

  // A range's Analysis: its numbers, not the whole trace's.
  void rangeNumbers() {
    SummaryView v;
    v.setSession(session_);
    const Summary& s = session_->whole().summary;
    auto late = session_->analyze_range(s.peak_time_ns + 1, s.last_event_ns);
    QVERIFY(late && late->error.empty());
    v.setRange(s.peak_time_ns + 1, s.last_event_ns, late);
    QCOMPARE(v.value("leaked-direct"),
             gui::bytesAndBlocks(late->leaks.direct.bytes, late->leaks.direct.blocks));
    QVERIFY(v.value("leaked-direct") != gui::bytesAndBlocks(8797, 13));
    QTRY_VERIFY_WITH_TIMEOUT(v.isReady(), 10000);
  }

  void emptyAfterSessionReset() {
    SummaryView v;
    v.setSession(session_);
    const Summary& s = session_->whole().summary;
    v.setRange(s.first_event_ns, s.last_event_ns, whole());
    v.setSession(nullptr);
    QVERIFY(!v.isReady());
    QCOMPARE(v.value("leaked-direct"), QString());
    QVERIFY(v.pieTitles().isEmpty());
  }
};

QTEST_MAIN(SummaryViewTest)
#include "summary_view_test.moc"
