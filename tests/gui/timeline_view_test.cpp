// TimelineView against the Session's own answers, on samples/fragmentation
// traced at test time and on an in-process trace with a mark and a scope:
// what is drawn equals Session::series / largest_blocks / scope_intervals
// for the visible range and the plot width; zoom, pan, rubber band and
// click give exact ranges and moments.
#include <QSignalSpy>
#include <QToolTip>
#include <QtTest>

#include "run_dir.hpp"
#include "timeline_axis.hpp"
#include "timeline_view.hpp"
#include "view_traces.hpp"

using namespace memtrail;
using namespace memtrail::gui;

namespace {

void compare_envelopes(const Envelope& drawn, const Envelope& asked) {
  QCOMPARE(drawn.t0, asked.t0);
  QCOMPARE(drawn.t1, asked.t1);
  QCOMPARE(drawn.step_ns, asked.step_ns);
  QVERIFY(drawn.time_ns == asked.time_ns);
  QVERIFY(drawn.min == asked.min);
  QVERIFY(drawn.max == asked.max);
  QVERIFY(drawn.has_data == asked.has_data);
}

// Every series drawn is what the Session answers for the visible range at
// one bucket per pixel; each stacked area sits on the areas before it.
void check_frame_matches_session(const TimelineView& v, const Session& s) {
  const TimelineFrame& f = v.frame();
  const auto [t0, t1] = v.visibleRange();
  QCOMPARE(f.t0, t0);
  QCOMPARE(f.t1, t1);
  QCOMPARE(f.width, v.plotLayout().plot.width());
  std::vector<std::uint64_t> top(static_cast<std::size_t>(f.width), 0);
  for (const TimelineSeries& series : f.series) {
    compare_envelopes(series.envelope,
                      s.series(series.info.id, t0, t1, static_cast<std::size_t>(f.width)));
    if (!series.stacked) continue;
    QVERIFY(series.base == top);
    for (std::size_t i = 0; i < top.size(); ++i)
      if (series.envelope.has_data[i]) top[i] += series.envelope.max[i];
  }
  // The bars: the leaf pools' blocks among the largest the Session names
  // (an upstream's blocks are segments of the pool above it).
  std::vector<BlockLifetime> blocks;
  for (const BlockLifetime& b : s.largest_blocks(t0, t1, TimelineModel::kAskedBars))
    if (!s.whole().pool(b.pool)->upstream && blocks.size() < TimelineModel::kMaxBars)
      blocks.push_back(b);
  QCOMPARE(f.bars.size(), blocks.size());
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    QCOMPARE(f.bars[i].block.address, blocks[i].address);
    QCOMPARE(f.bars[i].block.size, blocks[i].size);
    QCOMPARE(f.bars[i].block.alloc_ns, blocks[i].alloc_ns);
    QCOMPARE(f.bars[i].block.free_ns, blocks[i].free_ns);
  }
}

}  // namespace

class TimelineViewTest : public QObject {
  Q_OBJECT

  test::TempDir dir_{"gui-timeline"};
  std::shared_ptr<const Session> frag_, oom_;

 private slots:
  void initTestCase() {
    QVERIFY(!dir_.path().empty());
    frag_ = test::open_session(test::record_fragmentation_sample(dir_));
    oom_ = test::open_session(test::record_oom_trace(dir_));
    QVERIFY(frag_);
    QVERIFY(oom_);
  }

  void drawsLeafPoolsStackedAndReservedAsLines() {
    TimelineView v;
    v.resize(1200, 700);
    QSignalSpy ready(&v, &SessionView::ready);
    v.setSession(frag_);
    QCOMPARE(ready.count(), 1);
    QVERIFY(v.isReady());
    const Summary& sum = frag_->whole().summary;
    QCOMPARE(v.visibleRange(), std::make_pair(sum.first_event_ns, sum.last_event_ns));
    // The sample's leaf pools: two caching pools and a BFC pool, each with
    // segments: three stacked areas and three reserved lines (the upstreams
    // of the expandable-segments run have segments too, but their bytes are
    // the leaf's reserve: not drawn twice).
    int stacked = 0, reserved = 0;
    for (const auto& s : v.frame().series) {
      stacked += s.stacked && s.info.id.kind == SeriesKind::pool_used;
      reserved += !s.stacked && s.info.id.kind == SeriesKind::pool_reserved;
    }
    QCOMPARE(stacked, 3);
    QCOMPARE(reserved, 3);
    check_frame_matches_session(v, *frag_);
    // The axis reaches the tallest thing drawn: the sum of the areas'
    // maxima, at least the sample's peak used.
    QVERIFY(v.frame().y_max >= sum.peak_used_bytes);
  }

  void zoomPanAndSetVisibleRangeAreExact() {
    TimelineView v;
    v.resize(1000, 600);
    v.setSession(frag_);
    const auto [b, e] = v.visibleRange();
    const std::uint64_t span = e - b;
    // Zoom x2 around the middle: half the span, the middle stays put.
    const std::uint64_t mid = b + span / 2;
    v.zoomAt(2.0, mid);
    auto [z0, z1] = v.visibleRange();
    QCOMPARE(z1 - z0, static_cast<std::uint64_t>(std::llround(span / 2.0)));
    QVERIFY(std::llabs(static_cast<long long>(z0 + (z1 - z0) / 2) - static_cast<long long>(mid)) <=
            1);
    check_frame_matches_session(v, *frag_);
    // Zoom x4 around the left edge keeps the left edge.
    v.zoomAt(4.0, z0);
    QCOMPARE(v.visibleRange().first, z0);
    const std::uint64_t span4 = v.visibleRange().second - z0;
    QCOMPARE(span4, static_cast<std::uint64_t>(std::llround((z1 - z0) / 4.0)));
    // Pan by a quarter of the span, then far back: stops at the trace start.
    v.panBy(static_cast<std::int64_t>(span4 / 4));
    QCOMPARE(v.visibleRange(), std::make_pair(z0 + span4 / 4, z0 + span4 / 4 + span4));
    v.panBy(-static_cast<std::int64_t>(span * 10));
    QCOMPARE(v.visibleRange(), std::make_pair(b, b + span4));
    v.panBy(static_cast<std::int64_t>(span * 10));
    QCOMPARE(v.visibleRange(), std::make_pair(e - span4, e));
    check_frame_matches_session(v, *frag_);
    // Explicit range; past the end it is clamped; never below the minimum span.
    v.setVisibleRange(b + 1000, b + 51000);
    QCOMPARE(v.visibleRange(), std::make_pair(b + 1000, b + 51000));
    v.setVisibleRange(e - 10, e + 5000);
    QCOMPARE(v.visibleRange(), std::make_pair(e - 5010, e));
    v.zoomAt(1e9, b + 100000);
    QCOMPARE(v.visibleRange().second - v.visibleRange().first, TimelineView::kMinSpanNs);
    // The wheel zooms by kWheelFactor per notch around the cursor.
    v.setVisibleRange(b, e);
    const QRect plot = v.plotLayout().plot;
    const QPointF at(plot.left() + plot.width() / 2.0, plot.center().y());
    const std::uint64_t under = v.timeAtX(at.x());
    QWheelEvent wheel(at, v.mapToGlobal(at), QPoint(), QPoint(0, 120), Qt::NoButton, Qt::NoModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(&v, &wheel);
    QCOMPARE(v.visibleRange().second - v.visibleRange().first,
             static_cast<std::uint64_t>(std::llround(span / TimelineView::kWheelFactor)));
    QVERIFY(std::llabs(static_cast<long long>(v.timeAtX(at.x())) - static_cast<long long>(under)) <=
            static_cast<long long>(span / plot.width()));
  }

  void rubberBandEmitsTheExactRangeAndClickTheMoment() {
    TimelineView v;
    v.resize(1000, 600);
    v.setSession(frag_);
    const QRect plot = v.plotLayout().plot;
    const auto [b, e] = v.visibleRange();
    auto time_at = [&](int x) {
      return b +
             static_cast<std::uint64_t>(std::llround(static_cast<double>(x - plot.left()) /
                                                     plot.width() * static_cast<double>(e - b)));
    };
    QSignalSpy range(&v, &SessionView::rangeSelected);
    QSignalSpy moment(&v, &SessionView::momentSelected);
    const int y = plot.center().y(), x0 = plot.left() + 100, x1 = plot.left() + 400;
    QTest::mousePress(&v, Qt::RightButton, {}, QPoint(x1, y));
    QTest::mouseMove(&v, QPoint(x0 + 50, y));
    QTest::mouseRelease(&v, Qt::RightButton, {}, QPoint(x0, y));
    QCOMPARE(range.count(), 1);
    QCOMPARE(range.at(0).at(0).value<std::uint64_t>(), time_at(x0));
    QCOMPARE(range.at(0).at(1).value<std::uint64_t>(), time_at(x1));
    QCOMPARE(v.visibleRange(), std::make_pair(b, e));  // selecting does not zoom by itself
    // Shift + left drag selects too.
    QTest::mousePress(&v, Qt::LeftButton, Qt::ShiftModifier, QPoint(x0, y));
    QTest::mouseMove(&v, QPoint(x0 + 100, y));
    QTest::mouseRelease(&v, Qt::LeftButton, Qt::ShiftModifier, QPoint(x0 + 200, y));
    QCOMPARE(range.count(), 2);
    QCOMPARE(range.at(1).at(0).value<std::uint64_t>(), time_at(x0));
    QCOMPARE(range.at(1).at(1).value<std::uint64_t>(), time_at(x0 + 200));
    // A click (no drag) picks a moment; a plain drag pans instead.
    QTest::mouseClick(&v, Qt::LeftButton, {}, QPoint(x0 + 10, y));
    QTRY_COMPARE(moment.count(), 1);  // once no second click came
    QCOMPARE(moment.at(0).at(0).value<std::uint64_t>(), time_at(x0 + 10));
    v.zoomAt(4.0, b + (e - b) / 2);
    const auto before = v.visibleRange();
    QTest::mousePress(&v, Qt::LeftButton, {}, QPoint(x1, y));
    QTest::mouseMove(&v, QPoint(x1 - 50, y));
    QTest::mouseMove(&v, QPoint(x1 - 100, y));
    QTest::mouseRelease(&v, Qt::LeftButton, {}, QPoint(x1 - 100, y));
    QCOMPARE(moment.count(), 1);
    const double ns_per_px = static_cast<double>(before.second - before.first) / plot.width();
    QCOMPARE(v.visibleRange().first,
             before.first + static_cast<std::uint64_t>(std::llround(100 * ns_per_px)));
  }

  void setRangeShowsTheRangeWithAMargin() {
    TimelineView v;
    v.resize(1000, 600);
    v.setSession(frag_);
    const auto [b, e] = v.visibleRange();
    const std::uint64_t t0 = b + (e - b) / 4, t1 = b + (e - b) / 2;
    QSignalSpy ready(&v, &SessionView::ready);
    v.setRange(t0, t1, nullptr);
    QCOMPARE(ready.count(), 1);
    const std::uint64_t margin = (t1 - t0) / 20;
    QCOMPARE(v.visibleRange(), std::make_pair(t0 - margin, t1 + margin));
    check_frame_matches_session(v, *frag_);
    v.setRange(b, e, nullptr);
    QCOMPARE(v.visibleRange(), std::make_pair(b, e));
  }

  void barsAreTheLargestBlocksWithTheirStacks() {
    TimelineView v;
    v.resize(1200, 800);
    v.setSession(frag_);
    const TimelineFrame& f = v.frame();
    QVERIFY(!f.bars.empty());
    // Lane 0 holds the largest block; every placed bar's rectangle leads
    // back to it through barAt, and its tooltip names size, pool and stack.
    std::uint64_t largest = 0;
    for (const auto& bar : f.bars) largest = std::max(largest, bar.block.size);
    int placed = 0;
    for (std::size_t i = 0; i < f.bars.size(); ++i) {
      if (f.bars[i].lane < 0) continue;
      ++placed;
      if (f.bars[i].lane == 0 && f.bars[i].block.size == largest) largest = 0;
      const QRect r = v.barRect(i);
      QVERIFY(!r.isEmpty());
      QCOMPARE(v.barAt(r.center()) >= 0, true);
    }
    QVERIFY(placed > 0);
    QCOMPARE(largest, 0u);
    // Bars sharing a lane never overlap; lanes are opened largest block
    // first, so the largest block of each lane shrinks from top to bottom.
    for (std::size_t i = 0; i < f.bars.size(); ++i)
      for (std::size_t k = i + 1; k < f.bars.size(); ++k) {
        if (f.bars[i].lane < 0 || f.bars[i].lane != f.bars[k].lane) continue;
        const QRect a = v.barRect(i), b = v.barRect(k);
        QVERIFY(a.right() < b.left() || b.right() < a.left());
      }
    std::vector<std::uint64_t> lane_max(static_cast<std::size_t>(f.lanes), 0);
    for (const auto& bar : f.bars)
      if (bar.lane >= 0)
        lane_max[static_cast<std::size_t>(bar.lane)] =
            std::max(lane_max[static_cast<std::size_t>(bar.lane)], bar.block.size);
    QVERIFY(std::is_sorted(lane_max.rbegin(), lane_max.rend()));
    // Hovering a bar shows its tooltip.
    v.show();
    QVERIFY(QTest::qWaitForWindowExposed(&v));
    for (std::size_t i = 0; i < f.bars.size(); ++i) {
      if (f.bars[i].lane != 0) continue;
      const QPoint at = v.barRect(i).center();
      QHelpEvent help(QEvent::ToolTip, at, v.mapToGlobal(at));
      QApplication::sendEvent(&v, &help);
      QVERIFY(QTest::qWaitFor([] { return QToolTip::isVisible(); }, 2000));
      QCOMPARE(QToolTip::text(), v.barToolTip(static_cast<std::size_t>(v.barAt(at))));
      break;
    }
    // A block of the caching pool allocated by the sample's workload.
    for (std::size_t i = 0; i < f.bars.size(); ++i) {
      const PoolStats* pool = frag_->whole().pool(f.bars[i].block.pool);
      if (!pool || pool->info.name != "caching pool" || f.bars[i].block.size < 18 * test::kMiB)
        continue;
      const QString tip = v.barToolTip(i);
      QVERIFY2(tip.contains("<b>" + format_bytes(f.bars[i].block.size) + "</b> in " +
                            pool_label(frag_->whole(), PoolId{pool->info.id})),
               qPrintable(tip));
      QVERIFY2(tip.contains("fragmentation.cpp"), qPrintable(tip));
      return;
    }
    QFAIL("no 18 MiB block of the caching pool among the bars");
  }

  void marksAndScopesAreDrawnFromTheSession() {
    TimelineView v;
    v.resize(1000, 600);
    v.setSession(oom_);
    const auto [b, e] = v.visibleRange();
    const TimelineFrame& f = v.frame();
    QCOMPARE(f.marks.size(), 1u);
    QCOMPARE(QString::fromStdString(f.marks[0].text), QString(test::OomScenario::kMark));
    const auto scopes = oom_->scope_intervals(b, e, TimelineModel::kMaxScopes);
    QCOMPARE(scopes.size(), 1u);
    QCOMPARE(f.scopes.size(), 1u);
    QCOMPARE(f.scopes[0].begin_ns, scopes[0].begin_ns);
    QCOMPARE(f.scopes[0].end_ns, scopes[0].end_ns);
    // The mark lies after the scope (it is recorded after scope_end).
    QVERIFY(f.marks[0].time_ns >= f.scopes[0].end_ns);
    // Zoomed to before the scope: neither is drawn.
    if (scopes[0].begin_ns > b + TimelineView::kMinSpanNs) {
      v.setVisibleRange(b, scopes[0].begin_ns - 1);
      QVERIFY(v.frame().marks.empty());
      QVERIFY(v.frame().scopes.empty());
    }
    // Paints without a crash, with the moment line.
    v.setMoment(f.marks[0].time_ns);
    QVERIFY(!v.grab().isNull());
  }

  // The pixels: in a column of a stacked area, the series colour from the
  // areas beneath up to the bucket's minimum, a lighter tint up to its
  // maximum, background above.
  void areasArePaintedFromTheirEnvelopes() {
    TimelineView v;
    v.resize(1200, 700);
    v.setSession(frag_);
    v.zoomAt(8.0, frag_->whole().pool(PoolId{frag_->whole().pools[2].info.id})->peak_used_time_ns);
    const QImage image = v.grab().toImage();
    const TimelineFrame& f = v.frame();
    const QRect plot = v.plotLayout().plot;
    auto y_of = [&](std::uint64_t value) {
      return plot.bottom() + 1 - static_cast<double>(value) / f.y_top * plot.height();
    };
    int solid = 0, tint = 0;
    for (const TimelineSeries& s : f.series) {
      if (!s.stacked) continue;
      const Envelope& e = s.envelope;
      for (std::size_t i = 1; i + 1 < e.max.size(); ++i) {  // the frame covers the edges
        if (!e.has_data[i]) continue;
        const int x = plot.left() + static_cast<int>(i);
        const double base = y_of(s.base[i]), lo = y_of(s.base[i] + e.min[i]),
                     hi = y_of(s.base[i] + e.max[i]);
        if (base - lo >= 8) {
          QCOMPARE(image.pixelColor(x, static_cast<int>((base + lo) / 2)), s.color);
          ++solid;
        }
        if (lo - hi >= 8) {
          const QColor c = image.pixelColor(x, static_cast<int>((lo + hi) / 2));
          QVERIFY(c != s.color && c != QColor(Qt::white));
          QVERIFY(std::abs(c.hue() - s.color.hue()) <= 2);  // a tint of the same colour
          ++tint;
        }
      }
    }
    QVERIFY(solid > 0);
    QVERIFY(tint > 0);
  }

  void noSessionClears() {
    TimelineView v;
    v.resize(600, 400);
    v.setSession(frag_);
    v.setSession(nullptr);
    QVERIFY(!v.isReady());
    QVERIFY(v.frame().series.empty());
    QVERIFY(!v.grab().isNull());
  }

  // Issue 30, disagreement 5. The byte axis fits what is drawn: the
  // shown series' buckets with data in the visible range (stacked tops and
  // lines), so it refits on zoom and ignores hidden series.
  static std::uint64_t drawnMax(const TimelineFrame& f) {
    std::uint64_t top = 0;
    for (const TimelineSeries& s : f.series) {
      const Envelope& e = s.envelope;
      for (std::size_t i = 0; i < e.max.size(); ++i)
        if (e.has_data[i]) top = std::max(top, (s.stacked ? s.base[i] : 0) + e.max[i]);
    }
    return top;
  }

  void legendClickHidesASeriesNotTheMoment() {
    TimelineView v;
    v.resize(1200, 600);
    v.setSession(frag_);
    QSignalSpy moment(&v, &SessionView::momentSelected);
    // The series that sets the axis top.
    std::size_t tallest = 0;
    std::uint64_t tallest_max = 0;
    for (std::size_t i = 0; i < v.frame().series.size(); ++i)
      if (v.frame().series[i].envelope.max_of_all > tallest_max)
        tallest = i, tallest_max = v.frame().series[i].envelope.max_of_all;
    const std::uint64_t before = v.frame().y_max;
    QCOMPARE(before, drawnMax(v.frame()));
    const QRect entry = v.legendRect(tallest);
    QVERIFY(!entry.isEmpty());
    QCOMPARE(v.legendAt(entry.center()), static_cast<int>(tallest));
    QTest::mouseClick(&v, Qt::LeftButton, {}, entry.center());
    QTest::qWait(QApplication::doubleClickInterval() + 100);
    QCOMPARE(moment.count(), 0);
    QVERIFY(v.seriesHidden(tallest));
    QVERIFY(v.frame().series[tallest].hidden);
    QVERIFY(v.frame().series[tallest].envelope.max.empty());
    QCOMPARE(v.frame().y_max, drawnMax(v.frame()));
    QVERIFY(v.frame().y_max <= before);
    QVERIFY(!v.grab().isNull());
    QTest::mouseClick(&v, Qt::LeftButton, {}, entry.center());
    QVERIFY(!v.seriesHidden(tallest));
    QCOMPARE(v.frame().y_max, before);
  }

  void theByteAxisRefitsOnZoom() {
    TimelineView v;
    v.resize(1200, 600);
    v.setSession(frag_);
    const auto [b, e] = v.visibleRange();
    const std::uint64_t whole = v.frame().y_max;
    // Each tenth of the trace: the axis is what that tenth draws, lower
    // than the whole trace's where the pools hold less.
    int lower = 0;
    for (int k = 0; k < 10; ++k) {
      v.setVisibleRange(b + (e - b) * k / 10, b + (e - b) * (k + 1) / 10);
      QCOMPARE(v.frame().y_max, drawnMax(v.frame()));
      QVERIFY(v.frame().y_max <= whole);
      lower += v.frame().y_max < whole;
    }
    QVERIFY(lower > 0);
  }

  void everySeriesHasItsOwnColour() {
    std::vector<std::shared_ptr<const Session>> sessions = {frag_, oom_};
#ifdef MEMTRAIL_POOL_VS_MALLOC_BIN
    // Under `memtrail run`: pools, the glibc heap and RSS samples.
    const std::string run = dir_ / "pvm.run";
    auto r = test::run_command(std::string(MEMTRAIL_BIN) + " run -o " + test::shell_quote(run) +
                               " -- " MEMTRAIL_POOL_VS_MALLOC_BIN " 40");
    QCOMPARE(r.exit_code, 0);
    sessions.push_back(test::open_session(test::only_trace(run)));
    QVERIFY(sessions.back());
#endif
    for (const auto& session : sessions) {
      TimelineModel m;
      m.setSession(session);
      const auto& layers = m.layers();
      QVERIFY(layers.size() >= 2);
      for (std::size_t i = 0; i < layers.size(); ++i)
        for (std::size_t j = 0; j < i; ++j) {
          const QColor a = layers[i].color, c = layers[j].color;
          const int dr = a.red() - c.red(), dg = a.green() - c.green(), db = a.blue() - c.blue();
          QVERIFY2(dr * dr + dg * dg + db * db >= 40 * 40,
                   qPrintable(layers[i].label + " vs " + layers[j].label));
        }
    }
  }

  void aScopeBandNamesItsScope() {
    TimelineView v;
    v.resize(1000, 600);
    v.setSession(oom_);
    QCOMPARE(v.frame().scopes.size(), 1u);
    const ScopeInterval& s = v.frame().scopes[0];
    const QPoint at(
        static_cast<int>(std::lround(
            (v.xAtTime(s.begin_ns) + v.xAtTime(std::min(s.end_ns, v.visibleRange().second))) / 2)),
        v.plotLayout().scopes.top() + 1);
    QCOMPARE(v.scopeAt(at), 0);
    QString name;
    for (const ScopeStats& st : oom_->whole().scopes)
      if (st.info.id == s.scope) name = QString::fromStdString(st.info.name);
    QVERIFY(!name.isEmpty());
    QVERIFY2(v.scopeToolTip(0).contains(name), qPrintable(v.scopeToolTip(0)));
    QCOMPARE(v.scopeAt(QPoint(at.x(), v.plotLayout().plot.center().y())), -1);
  }
};

QTEST_MAIN(TimelineViewTest)
#include "timeline_view_test.moc"
