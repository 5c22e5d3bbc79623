// FragmentationView against the Session's segment map and against facts of
// samples/fragmentation (traced at test time): 32 segments per caching run,
// each pinned by its 1.2 MiB block once the 18 MiB blocks are freed.
#include <QSignalSpy>
#include <QtTest>

#include "fragmentation_view.hpp"
#include "oom_explainer.hpp"
#include "segment_fragmentation_chart.hpp"
#include "view_traces.hpp"

using namespace memtrail;
using namespace memtrail::gui;

namespace {

constexpr int kSampleSegments = 32;  // samples/fragmentation: 32 x (1.2 MiB + 18 MiB)

// The rows drawn are the map's segments cut by segment_spans().
void check_rows_match_map(const FragmentationView& v, const SegmentMap& map) {
  const auto& rows = v.rows()->rows();
  QCOMPARE(rows.size(), map.segments.size() + (map.outside_segments.empty() ? 0 : 1));
  for (std::size_t i = 0; i < map.segments.size(); ++i) {
    const auto spans = segment_spans(map.segments[i]);
    QCOMPARE(rows[i].address, map.segments[i].address);
    QCOMPARE(rows[i].size, map.segments[i].size);
    QCOMPARE(rows[i].spans.size(), spans.size());
    for (std::size_t k = 0; k < spans.size(); ++k) {
      QCOMPARE(rows[i].spans[k].address, spans[k].address);
      QCOMPARE(rows[i].spans[k].size, spans[k].size);
      QVERIFY(rows[i].spans[k].state == spans[k].state);
    }
  }
}

bool wait_ready(const FragmentationView& v) {
  return QTest::qWaitFor([&] { return v.isReady(); }, 10000);
}

}  // namespace

class FragmentationViewTest : public QObject {
  Q_OBJECT

  test::TempDir dir_{"gui-fragmentation"};
  std::shared_ptr<const Session> s_;
  std::uint32_t caching_ = 0;    // the first caching pool (default config)
  std::uint64_t pinned_at_ = 0;  // its 18 MiB blocks are all freed, the small ones live

 private slots:
  void initTestCase() {
    QVERIFY(!dir_.path().empty());
    s_ = test::open_session(test::record_fragmentation_sample(dir_));
    QVERIFY(s_);
    const Analysis& a = s_->whole();
    for (const PoolStats& p : a.pools)
      if (p.info.name == "caching pool") {
        caching_ = p.info.id;
        break;
      }
    QVERIFY(caching_ != 0);
    // When the last 18 MiB block of that pool is freed (and before the
    // first small one is).
    std::uint64_t last_large_free = 0, first_small_free = kTimeMax;
    for (const BlockLifetime& b : s_->largest_blocks(0, kTimeMax, 100000)) {
      if (b.pool != PoolId{caching_}) continue;
      if (b.size >= 18 * test::kMiB) last_large_free = std::max(last_large_free, b.free_ns);
      if (b.size < 2 * test::kMiB) first_small_free = std::min(first_small_free, b.free_ns);
    }
    QVERIFY(last_large_free > 0);
    QVERIFY(last_large_free < first_small_free);
    pinned_at_ = last_large_free;
  }

  void poolsWithSegmentsComeFirstAndTheMomentIsThePeak() {
    FragmentationView v;
    v.resize(1300, 800);
    v.setSession(s_);
    const auto order = v.poolOrder();
    const Analysis& a = s_->whole();
    QCOMPARE(order.size(), a.pools.size());
    bool seen_without = false;
    for (std::uint32_t id : order) {
      const bool with = a.pool(PoolId{id})->has_segments;
      QVERIFY(!(with && seen_without));
      seen_without = seen_without || !with;
    }
    // Pools whose segments hold blocks first: the one shown on load has a
    // fragmentation series.
    bool seen_without_blocks = false;
    for (std::uint32_t id : order) {
      const bool blocks = !a.pool(PoolId{id})->fragmentation.empty();
      QVERIFY(!(blocks && seen_without_blocks));
      seen_without_blocks = seen_without_blocks || !blocks;
    }
    QCOMPARE(order.front(), caching_);
    // Issue 30 item 4: every view starts at the peak of used bytes, and says so.
    QCOMPARE(v.moment(), a.summary.peak_time_ns);
    QVERIFY(v.momentIsPeakUsed());
    QVERIFY(wait_ready(v));
    QVERIFY2(v.headline().contains("(peak used)"), qPrintable(v.headline()));
    QCOMPARE(v.map().time_ns, s_->segment_map(PoolId{caching_}, v.moment()).time_ns);
    check_rows_match_map(v, s_->segment_map(PoolId{caching_}, v.moment()));
  }

  void everySegmentIsPinnedByItsSmallBlock() {
    FragmentationView v;
    v.resize(1300, 800);
    v.setSession(s_);
    v.setMoment(pinned_at_);
    QVERIFY(wait_ready(v));
    const SegmentMap map = s_->segment_map(PoolId{caching_}, pinned_at_);
    check_rows_match_map(v, map);
    // The sample's facts: 32 segments of 20 MiB, each one live 1.2 MiB
    // block and the freed 18 MiB as an inactive split; nothing releasable.
    const auto& rows = v.rows()->rows();
    QCOMPARE(static_cast<int>(rows.size()), kSampleSegments);
    for (const SegmentRow& r : rows) {
      QCOMPARE(r.size, 20 * test::kMiB);
      int allocated = 0;
      std::uint64_t split = 0;
      for (const SegmentSpan& s : r.spans) {
        QVERIFY(s.state != SpanState::cached_free);
        if (s.state == SpanState::allocated) {
          ++allocated;
          QVERIFY(s.size >= 1258291 && s.size < 1258291 + 512);
        } else {
          split += s.size;
        }
      }
      QCOMPARE(allocated, 1);
      QVERIFY(split > 18 * test::kMiB);
    }
    QVERIFY(v.headline().contains("32 segments"));
    QVERIFY(v.note().isEmpty());
  }

  void clickingASpanShowsItsSizeAndStack() {
    FragmentationView v;
    v.resize(1300, 800);
    v.setSession(s_);
    v.setMoment(pinned_at_);
    QVERIFY(wait_ready(v));
    v.show();
    SegmentRows* rows = v.rows();
    const auto& r = rows->rows().at(0);
    std::size_t live = 0, split = 0;
    for (std::size_t k = 0; k < r.spans.size(); ++k)
      (r.spans[k].state == SpanState::allocated ? live : split) = k;
    QSignalSpy clicked(rows, &SegmentRows::spanClicked);
    QTest::mouseClick(rows, Qt::LeftButton, {}, rows->spanRect(0, live).center());
    QCOMPARE(clicked.count(), 1);
    QCOMPARE(rows->selected(), std::make_pair(0, static_cast<int>(live)));
    QVERIFY2(v.spanDetails().startsWith("1.2 MiB, allocated"), qPrintable(v.spanDetails()));
    QVERIFY2(v.spanDetails().contains("fragmentation.cpp"), qPrintable(v.spanDetails()));
    QTest::mouseClick(rows, Qt::LeftButton, {}, rows->spanRect(0, split).center());
    QCOMPARE(rows->selected(), std::make_pair(0, static_cast<int>(split)));
    QVERIFY2(v.spanDetails().contains("inactive split"), qPrintable(v.spanDetails()));
  }

  void staleSegmentMapsAreDropped() {
    FragmentationView v;
    v.resize(1300, 800);
    v.setSession(s_);
    // Several moments in a row: only the last one is shown.
    const std::uint64_t peak = v.moment();
    for (std::uint64_t t : {peak / 3, peak / 2, peak, pinned_at_ - 1, pinned_at_}) v.setMoment(t);
    QVERIFY(wait_ready(v));
    QCOMPARE(v.moment(), pinned_at_);
    check_rows_match_map(v, s_->segment_map(PoolId{caching_}, pinned_at_));
    QTest::qWait(50);  // a late answer for an older moment must not replace it
    check_rows_match_map(v, s_->segment_map(PoolId{caching_}, pinned_at_));
  }

  void clearingTheSessionDropsAnswersInFlight() {
    FragmentationView v;
    v.resize(1300, 800);
    v.setSession(s_);  // a segment map and an explanation are being computed
    v.setSession(nullptr);
    QTest::qWait(300);  // their answers arrive for a view that has no session
    QVERIFY(!v.isReady());
    QVERIFY(v.rows()->rows().empty());
    QVERIFY(!v.explainer()->isReady());
    QVERIFY(!v.grab().isNull());
  }

  void aPoolWithoutSegmentsIsOneRowOfBlocks() {
    FragmentationView v;
    v.resize(1300, 800);
    v.setSession(s_);
    QVERIFY(wait_ready(v));
    const Analysis& a = s_->whole();
    const PoolStats* plain = nullptr;
    for (const PoolStats& p : a.pools)
      if (!p.has_segments && p.peak_used_bytes > 0) plain = &p;
    QVERIFY(plain);
    v.selectPool(plain->info.id);
    QCOMPARE(v.currentPool(), plain->info.id);
    v.setMoment(plain->peak_used_time_ns);
    QVERIFY(wait_ready(v));
    QCOMPARE(v.moment(), plain->peak_used_time_ns);
    const SegmentMap map = s_->segment_map(PoolId{plain->info.id}, v.moment());
    QVERIFY(map.segments.empty());
    QVERIFY(!map.outside_segments.empty());
    const auto& rows = v.rows()->rows();
    QCOMPARE(rows.size(), 1u);
    QVERIFY(!rows[0].segment);
    QCOMPARE(rows[0].spans.size(), map.outside_segments.size());
    std::uint64_t bytes = 0;
    for (const BlockInfo& b : map.outside_segments) bytes += b.size;
    QCOMPARE(rows[0].size, bytes);
    QVERIFY2(v.note().contains("no segment information"), qPrintable(v.note()));
  }

  void fragmentationOverTimeIsTheSessionSeriesAndAClickPicksTheMoment() {
    FragmentationView v;
    v.resize(1300, 800);
    v.setSession(s_);
    v.show();
    QVERIFY(wait_ready(v));
    SegmentFragmentationChart* chart = v.chart();
    const Summary& sum = s_->whole().summary;
    const Envelope asked =
        s_->series({SeriesKind::pool_external_fragmentation, PoolId{caching_}}, sum.first_event_ns,
                   sum.last_event_ns, static_cast<std::size_t>(chart->plotRect().width()));
    QVERIFY(chart->envelope().max == asked.max);
    QVERIFY(chart->envelope().has_data == asked.has_data);
    // A range narrows the chart to it; the moment (the whole trace's peak,
    // outside the range) goes back inside it (issue 30 item 4): the rows
    // never show a moment outside the range.
    const std::uint64_t r0 = pinned_at_ / 2, r1 = pinned_at_ + 1000;
    QVERIFY(v.moment() < r0 || v.moment() > r1);
    v.setRange(r0, r1, nullptr);
    QVERIFY(v.moment() >= r0 && v.moment() <= r1);
    QVERIFY(wait_ready(v));
    QVERIFY(v.map().time_ns >= r0 && v.map().time_ns <= r1);
    v.setMoment(r1 + 5000);  // e.g. an OOM event outside the range
    QCOMPARE(v.moment(), r1);
    const Envelope narrowed =
        s_->series({SeriesKind::pool_external_fragmentation, PoolId{caching_}}, r0, r1,
                   static_cast<std::size_t>(chart->plotRect().width()));
    QCOMPARE(chart->envelope().t0, narrowed.t0);
    QCOMPARE(chart->envelope().t1, narrowed.t1);
    QVERIFY(chart->envelope().max == narrowed.max);
    QSignalSpy moment(&v, &SessionView::momentSelected);
    const QPoint at(chart->plotRect().left() + chart->plotRect().width() * 3 / 4,
                    chart->plotRect().center().y());
    QTest::mouseClick(chart, Qt::LeftButton, {}, at);
    QCOMPARE(moment.count(), 1);
    const auto t = moment.at(0).at(0).value<std::uint64_t>();
    QCOMPARE(t, chart->timeAtX(at.x()));
    QCOMPARE(v.moment(), t);
    QVERIFY(wait_ready(v));
    check_rows_match_map(v, s_->segment_map(PoolId{caching_}, t));
  }
};

QTEST_MAIN(FragmentationViewTest)
#include "fragmentation_view_test.moc"
