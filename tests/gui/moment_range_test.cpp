// One moment and one range owned by the window (issue 30, "Views that
// disagree today" item 4): every view starts at the range's peak of used
// bytes and says so; a double click on the timeline drops the range and
// keeps the moment; "Go to peak used" brings the peak back; a range that
// leaves the moment out moves it to the range's peak, so Fragmentation
// never shows a moment outside the range; a range without an RSS sample
// says so. On samples/leaks traced at test time, in a MainWindow with its
// real views.
#include <QProgressBar>
#include <QtTest>

#include "format.hpp"
#include "fragmentation_view.hpp"
#include "gui_traces.hpp"
#include "load_status.hpp"
#include "main_window.hpp"
#include "summary_view.hpp"
#include "timeline_axis.hpp"
#include "timeline_view.hpp"
#include "views.hpp"

using namespace memtrail;
using gui::MainWindow;

namespace {

gui::SummaryView* summaryOf(MainWindow& w) {
  return static_cast<gui::SummaryView*>(w.view("summary"));
}
gui::FragmentationView* fragmentationOf(MainWindow& w) {
  return static_cast<gui::FragmentationView*>(w.view("fragmentation"));
}
gui::TimelineView* timelineOf(MainWindow& w) {
  return static_cast<gui::TimelineView*>(w.view("timeline"));
}

// Applies [t0, t1] as a rubber band on a view would, and waits for it.
bool selectRange(MainWindow& w, std::uint64_t t0, std::uint64_t t1) {
  QSignalSpy applied(&w, &MainWindow::rangeApplied);
  emit w.view("leaks")->rangeSelected(t0, t1);
  return applied.wait(20000);
}

bool everyViewReady(MainWindow& w) {
  for (int waited = 0; waited < 20000; waited += 20) {
    if (w.allViewsReady()) return true;
    QTest::qWait(20);
  }
  return false;
}

}  // namespace

class MomentRangeTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY2(!test::leaksTrace().empty(), "memtrail run of samples/leaks failed");
  }

  // Summary and Fragmentation start at one moment, the peak used, and say so.
  void viewsStartAtThePeakUsedAndSaySo() {
    test::TestWindow w;
    QVERIFY(test::openUntilAllReady(w, QString::fromStdString(test::leaksTrace())));
    const std::uint64_t peak = w.session()->whole().summary.peak_time_ns;
    QCOMPARE(summaryOf(w)->moment(), peak);
    QVERIFY(everyViewReady(w));
    QCOMPARE(fragmentationOf(w)->moment(), peak);
    QVERIFY2(summaryOf(w)->momentText().contains("(peak used)"),
             qPrintable(summaryOf(w)->momentText()));
    QVERIFY2(fragmentationOf(w)->headline().contains("(peak used)"),
             qPrintable(fragmentationOf(w)->headline()));
    QCOMPARE(w.moment(), peak);
    QVERIFY(w.momentIsPeakUsed());
    QVERIFY2(w.focusText().contains("peak used") && w.focusText().contains("whole trace"),
             qPrintable(w.focusText()));
    QCOMPARE(timelineOf(w)->moment(), std::optional<std::uint64_t>(peak));
  }

  // A click on the timeline chooses a moment; a double click ("the whole
  // trace", as documented) drops the range and leaves the moment alone;
  // "Go to peak used" brings the peak back.
  void doubleClickDropsTheRangeNotTheMoment() {
    test::TestWindow w;
    w.resize(1200, 800);
    w.show();
    QVERIFY(test::openUntilAllReady(w, QString::fromStdString(test::leaksTrace())));
    QVERIFY(w.showView("timeline"));
    const Summary& s = w.session()->whole().summary;
    gui::TimelineView* timeline = timelineOf(w);
    const QRect plot = timeline->plotLayout().plot;
    const QPoint click(plot.left() + plot.width() / 3, plot.center().y());
    QTest::mouseClick(timeline, Qt::LeftButton, {}, click);
    const std::uint64_t chosen = timeline->timeAtX(click.x());
    QTRY_COMPARE_WITH_TIMEOUT(summaryOf(w)->moment(), chosen, 5000);
    QVERIFY(summaryOf(w)->momentText().contains("chosen"));

    QVERIFY(selectRange(w, s.first_event_ns, chosen + (s.last_event_ns - chosen) / 2));
    QVERIFY(everyViewReady(w));
    QCOMPARE(summaryOf(w)->moment(), chosen);  // the range holds the moment: it stays

    QSignalSpy applied(&w, &MainWindow::rangeApplied);
    const QRect now = timeline->plotLayout().plot;
    QTest::mouseDClick(timeline, Qt::LeftButton, {}, QPoint(now.left() + 40, now.center().y()));
    QTest::qWait(QApplication::doubleClickInterval() + 200);
    QVERIFY(applied.count() == 1 || applied.wait(10000));
    QCOMPARE(w.rangeFrom(), s.first_event_ns);
    QCOMPARE(w.rangeTo(), s.last_event_ns);
    QVERIFY(everyViewReady(w));
    QCOMPARE(summaryOf(w)->moment(), chosen);
    QCOMPARE(fragmentationOf(w)->moment(), chosen);
    QVERIFY(!w.momentIsPeakUsed());

    w.goToPeakUsed();
    QVERIFY(everyViewReady(w));
    QCOMPARE(summaryOf(w)->moment(), s.peak_time_ns);
    QCOMPARE(fragmentationOf(w)->moment(), s.peak_time_ns);
    QVERIFY(summaryOf(w)->momentText().contains("(peak used)"));
    QVERIFY(w.focusText().contains("peak used"));
  }

  // A range that leaves the moment out: every view moves to the range's
  // peak, Fragmentation included; a moment chosen outside it is clamped.
  void aRangeNeverShowsAMomentOutsideIt() {
    test::TestWindow w;
    QVERIFY(test::openUntilAllReady(w, QString::fromStdString(test::leaksTrace())));
    const Summary& s = w.session()->whole().summary;
    const std::uint64_t t0 = s.peak_time_ns + 1, t1 = s.last_event_ns;
    QVERIFY(selectRange(w, t0, t1));
    QVERIFY(everyViewReady(w));
    const std::uint64_t fm = fragmentationOf(w)->moment(), sm = summaryOf(w)->moment();
    QVERIFY2(fm >= t0 && fm <= t1, qPrintable(QString("fragmentation at %1").arg(fm)));
    QCOMPARE(fm, sm);
    QVERIFY(fragmentationOf(w)->headline().contains("(peak used)"));
    w.applyMoment(s.first_event_ns);  // before the range
    QVERIFY(everyViewReady(w));
    QCOMPARE(fragmentationOf(w)->moment(), t0);
    QCOMPARE(summaryOf(w)->moment(), t0);
  }

  // A range holding no RSS sample of a sampled trace says so, not "no
  // samples in the trace".
  void aRangeWithoutRssSamplesSaysSo() {
    test::TestWindow w;
    QVERIFY(test::openUntilAllReady(w, QString::fromStdString(test::leaksTrace())));
    const Summary& s = w.session()->whole().summary;
    QVERIFY2(s.samples > 0, "the run recorded no RSS sample");
    // A 1 µs window holding no sample (the tracer samples every few ms).
    std::uint64_t from = 0;
    for (int k = 1; k < 16 && !from; ++k) {
      const std::uint64_t t = s.first_event_ns + (s.last_event_ns - s.first_event_ns) * k / 16;
      if (w.session()->analyze_range(t, t + 1000)->summary.samples == 0) from = t;
    }
    QVERIFY(from);
    QVERIFY(selectRange(w, from, from + 1000));
    QVERIFY(everyViewReady(w));
    QCOMPARE(summaryOf(w)->value("peak-rss"), QString("no RSS sample in this range"));
  }

  // Item 6: a range re-analysis showed the old numbers under the old
  // heading with no progress: now they are greyed, the corner says
  // "re-analysing", the status bar shows progress and Cancel drops it.
  void rangeReanalysisGreysTheOldNumbers() {
    test::TestWindow w;
    QVERIFY(test::openUntilAllReady(w, QString::fromStdString(test::leaksTrace())));
    const Summary& s = w.session()->whole().summary;
    QVERIFY(!w.viewsGreyed());
    QSignalSpy applied(&w, &MainWindow::rangeApplied);
    emit w.view("leaks")->rangeSelected(s.peak_time_ns, s.last_event_ns);
    QVERIFY(w.viewsGreyed());
    QVERIFY2(w.focusText().contains("re-analysing"), qPrintable(w.focusText()));
    QVERIFY(!w.loadStatus()->isHidden());
    QVERIFY(applied.wait(20000));
    QVERIFY(!w.viewsGreyed());
    QVERIFY(w.loadStatus()->isHidden());
    QVERIFY2(!w.focusText().contains("re-analysing"), qPrintable(w.focusText()));
    // Cancel (the status bar's button) drops a range being analysed.
    emit w.view("leaks")->rangeSelected(s.first_event_ns, s.peak_time_ns);
    QVERIFY(w.viewsGreyed());
    w.cancelLoad();
    QVERIFY(!w.viewsGreyed());
    QVERIFY(w.loadStatus()->isHidden());
    QTest::qWait(300);
    QCOMPARE(w.rangeFrom(), s.peak_time_ns);  // the range before stays
  }

  // Item 6: the progress text was clipped inside the status bar's bar.
  void progressTextFitsItsBar() {
    gui::LoadStatus status;
    auto state = std::make_shared<gui::LoadState>();
    state->update({LoadStage::reading, 1000ull << 20, 1023ull << 20});
    status.follow(state);
    const QProgressBar* bar = status.bar();
    QVERIFY(!bar->text().isEmpty());
    QVERIFY2(bar->minimumWidth() >= bar->fontMetrics().horizontalAdvance(bar->text()) + 20,
             qPrintable(bar->text()));
    status.stop();
  }

  // Item 6: the status bar and the headings said "us" beside the axes' "µs".
  void microsecondsReadMuSEverywhere() {
    QCOMPARE(gui::durationText(1500), QString("1.5 µs"));
    QCOMPARE(gui::format_time(1500), QString("1.5 µs"));
  }

  // Item 6: below the window's minimum size the Fragmentation tab's OOM
  // explainer overlapped the segment rows (at 520×360).
  void theWindowHasAMinimumSize() {
    test::TestWindow w;
    w.resize(520, 360);
    QVERIFY(w.minimumSize().width() >= 800 && w.minimumSize().height() >= 500);
    QVERIFY(w.width() >= w.minimumSize().width() && w.height() >= w.minimumSize().height());
  }
};

QTEST_MAIN(MomentRangeTest)
#include "moment_range_test.moc"
