// The timeline's byte axis in a range of samples/leaks (issue 30,
// disagreement 5, seen again later): after the trace's first RSS sample (one
// every 10 ms, the run lasts ~15 ms) the RSS line (~5 MiB) sets the axis while malloc used stays
// under 0.1 MiB, and it was drawn on the plot's top border, under the frame, where nobody saw it.
// The axis top now has the charts' 5 % headroom: the line that sets it is drawn inside the plot,
// the top stays within a small factor of the largest value drawn, and hiding a series (its legend
// entry) refits the axis to what is still shown.
#include <QApplication>
#include <QtTest>

#include "gui_traces.hpp"
#include "timeline_view.hpp"

using namespace memtrail;
using namespace memtrail::gui;

namespace {

// The largest value drawn: the shown series' buckets with data (stacked
// areas at their tops).
std::uint64_t drawnMax(const TimelineFrame& f) {
  std::uint64_t top = 0;
  for (const TimelineSeries& s : f.series) {
    const Envelope& e = s.envelope;
    for (std::size_t i = 0; i < e.max.size(); ++i)
      if (e.has_data[i]) top = std::max(top, (s.stacked ? s.base[i] : 0) + e.max[i]);
  }
  return top;
}

std::size_t seriesOfKind(const TimelineFrame& f, SeriesKind kind) {
  for (std::size_t i = 0; i < f.series.size(); ++i)
    if (f.series[i].info.id.kind == kind) return i;
  return f.series.size();
}

// The axis fits what is drawn: its top is above the largest value by the
// headroom, and no more than a quarter above it.
void checkAxisFitsTheDrawnSeries(const TimelineFrame& f) {
  const std::uint64_t drawn = drawnMax(f);
  QVERIFY(drawn > 0);
  QCOMPARE(f.y_max, drawn);
  QVERIFY2(f.y_top >= drawn + drawn / 25 && f.y_top <= drawn + drawn / 4,
           qPrintable(QStringLiteral("axis top %1, largest drawn %2").arg(f.y_top).arg(drawn)));
}

// The line's pixel in column x near row y: antialiased, a 1.5 px line
// covers at least 0.75 of one row, so that row is far darker than the
// background, the grid and the frame's grey (0xaa) whatever y's fraction.
bool darkLineNear(const QImage& image, int x, double y, int first_row) {
  for (int row = static_cast<int>(y) - 2; row <= static_cast<int>(y) + 2; ++row) {
    if (row < first_row) continue;
    const QColor c = image.pixelColor(x, row);
    if (c.red() + c.green() + c.blue() < 3 * 0x90) return true;
  }
  return false;
}

}  // namespace

class TimelineByteAxisTest : public QObject {
  Q_OBJECT

  std::shared_ptr<const Session> session_;

  // The trace from 60 % to 90 %: after the RSS sample at the start, where
  // the line carries that sample, as in the range the issue names.
  void showMiddleRange(TimelineView& v) {
    const Summary& s = session_->whole().summary;
    const std::uint64_t span = s.last_event_ns - s.first_event_ns;
    v.resize(1200, 700);
    v.setSession(session_);
    v.setRange(s.first_event_ns + span * 6 / 10, s.first_event_ns + span * 9 / 10, nullptr);
  }

 private slots:
  void initTestCase() {
    std::string error;
    session_ = test::leaksSession(&error);
    QVERIFY2(session_, error.c_str());
    QVERIFY2(session_->whole().summary.samples >= 1, "samples/leaks ran without RSS samples");
  }

  // RSS sets the axis in that range, far above malloc used.
  void rssSetsTheAxisInTheRange() {
    TimelineView v;
    showMiddleRange(v);
    const TimelineFrame& f = v.frame();
    const std::size_t rss = seriesOfKind(f, SeriesKind::rss);
    QVERIFY(rss < f.series.size());
    QCOMPARE(f.series[rss].envelope.max_of_all, f.y_max);
    std::uint64_t used = 0;
    for (const TimelineSeries& s : f.series)
      if (s.stacked) used = std::max(used, s.envelope.max_of_all);
    QVERIFY2(used * 10 < f.y_max,
             qPrintable(QStringLiteral("used %1, rss %2").arg(used).arg(f.y_max)));
    checkAxisFitsTheDrawnSeries(f);
  }

  // The RSS line is painted inside the plot, below its top frame, at every
  // column where it has one value.
  void theLineThatSetsTheAxisIsSeen() {
    TimelineView v;
    showMiddleRange(v);
    const TimelineFrame& f = v.frame();
    const QRect plot = v.plotLayout().plot;
    const TimelineSeries& rss = f.series.at(seriesOfKind(f, SeriesKind::rss));
    const QImage image = v.grab().toImage();
    int seen = 0, columns = 0;
    for (std::size_t i = 2; i + 2 < rss.envelope.max.size(); i += 7) {
      if (!rss.envelope.has_data[i] || rss.envelope.max[i] != rss.envelope.min[i]) continue;
      ++columns;
      const double y =
          plot.bottom() + 1 -
          static_cast<double>(rss.envelope.max[i]) / static_cast<double>(f.y_top) * plot.height();
      const int x = plot.left() + static_cast<int>(i);
      QVERIFY2(y >= plot.top() + 3, "the line lies on the plot's top frame");
      seen += darkLineNear(image, x, y, plot.top() + 2);
    }
    QVERIFY(columns > 20);
    QCOMPARE(seen, columns);
  }

  // A click on RSS's legend entry hides it: the axis refits to what is left
  // (the heap's sampled reserved line and malloc used, a small fraction);
  // hiding the heap's line too fits malloc used; showing RSS again brings
  // the first axis back.
  void hidingASeriesRefitsTheAxis() {
    TimelineView v;
    showMiddleRange(v);
    const std::uint64_t with_rss = v.frame().y_top;
    const std::size_t rss = seriesOfKind(v.frame(), SeriesKind::rss);
    QTest::mouseClick(&v, Qt::LeftButton, {}, v.legendRect(rss).center());
    QVERIFY(v.seriesHidden(rss));
    checkAxisFitsTheDrawnSeries(v.frame());
    QVERIFY(v.frame().y_top * 4 < with_rss);
    const std::size_t heap = seriesOfKind(v.frame(), SeriesKind::heap_reserved);
    if (heap < v.frame().series.size()) {
      const std::uint64_t with_heap = v.frame().y_top;
      v.setSeriesHidden(heap, true);
      checkAxisFitsTheDrawnSeries(v.frame());
      // Lower unless malloc used reached above the heap's last sample.
      QVERIFY(v.frame().y_top <= with_heap);
      v.setSeriesHidden(heap, false);
    }
    QTest::qWait(QApplication::doubleClickInterval() + 50);  // two clicks, not a double click
    QTest::mouseClick(&v, Qt::LeftButton, {}, v.legendRect(rss).center());
    QVERIFY(!v.seriesHidden(rss));
    QCOMPARE(v.frame().y_top, with_rss);
  }
};

QTEST_MAIN(TimelineByteAxisTest)
#include "timeline_byte_axis_test.moc"
