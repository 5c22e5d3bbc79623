// The OOM explainer on a trace recorded in process (view_traces.hpp): a
// caching pool over a 64 MiB device whose three 20 MiB segments are each
// pinned by a 1.2 MiB block when 30 MiB is asked for. What it shows is
// Session::explain for the chosen oom event or moment.
#include <QSignalSpy>
#include <QTreeWidget>
#include <QtTest>

#include "fragmentation_view.hpp"
#include "oom_explainer.hpp"
#include "view_traces.hpp"

using namespace memtrail;
using namespace memtrail::gui;
using test::OomScenario;

namespace {

void check_same(const OomExplanation& shown, const OomExplanation& asked) {
  QCOMPARE(shown.time_ns, asked.time_ns);
  QCOMPARE(shown.requested, asked.requested);
  QCOMPARE(shown.pools.size(), asked.pools.size());
  for (std::size_t i = 0; i < asked.pools.size(); ++i) {
    const auto &x = shown.pools[i], &y = asked.pools[i];
    QCOMPARE(x.pool, y.pool);
    QCOMPARE(x.reserved, y.reserved);
    QCOMPARE(x.used, y.used);
    QCOMPARE(x.free, y.free);
    QCOMPARE(x.largest_free, y.largest_free);
    QCOMPARE(x.request_fits, y.request_fits);
    QCOMPARE(x.pinned.size(), y.pinned.size());
  }
}

}  // namespace

class OomExplainerTest : public QObject {
  Q_OBJECT

  test::TempDir dir_{"gui-oom"};
  std::shared_ptr<const Session> s_;

 private slots:
  void initTestCase() {
    QVERIFY(!dir_.path().empty());
    s_ = test::open_session(test::record_oom_trace(dir_));
    QVERIFY(s_);
    QCOMPARE(s_->ooms().size(), 1u);
    QCOMPARE(s_->ooms()[0].requested, OomScenario::kRequest);
  }

  void anOomEventIsExplainedPoolByPool() {
    OomExplainer x;
    x.resize(900, 600);
    x.setSession(s_);
    QSignalSpy chosen(&x, &OomExplainer::oomChosen);
    x.choose(1);
    QCOMPARE(chosen.count(), 1);
    const OomEvent& oom = s_->ooms()[0];
    QCOMPARE(chosen.at(0).at(0).value<std::uint32_t>(), oom.pool.value);
    QVERIFY(QTest::qWaitFor([&] { return x.isReady(); }, 10000));
    const OomExplanation& e = x.explanation();
    QVERIFY2(e.error.empty(), e.error.c_str());
    check_same(e, s_->explain(oom.time_ns, oom.requested));
    // The scenario's facts: the pool that failed has three 20 MiB segments,
    // each pinned by one small block; the largest free block is what is
    // left of a segment, far short of 30 MiB.
    const OomExplanation::PoolPart* part = nullptr;
    for (const auto& p : e.pools)
      if (p.pool == oom.pool) part = &p;
    QVERIFY(part);
    QCOMPARE(part->name, std::string("oom pool"));
    QCOMPARE(part->reserved, OomScenario::kSegments * 20 * test::kMiB);
    QVERIFY(!part->request_fits);
    QCOMPARE(static_cast<int>(part->pinned.size()), OomScenario::kSegments);
    for (const auto& seg : part->pinned) {
      QCOMPARE(seg.segment.size, 20 * test::kMiB);
      QCOMPARE(seg.segment.blocks.size(), 1u);
      const std::uint64_t small = seg.segment.blocks[0].size;
      QVERIFY(small >= OomScenario::kSmall && small < OomScenario::kSmall + 512);
      QCOMPARE(seg.free_bytes, 20 * test::kMiB - small);
      QCOMPARE(seg.largest_free, 20 * test::kMiB - small);
    }
    QCOMPARE(part->used, part->pinned[0].segment.blocks[0].size * OomScenario::kSegments);
    QCOMPARE(part->free, part->reserved - part->used);
    QCOMPARE(part->largest_free, part->pinned[0].largest_free);

    // The tree: one row per pool; the failing pool's request "does not fit",
    // its pinned segments beneath with their blocks.
    QTreeWidget* tree = x.tree();
    QCOMPARE(tree->topLevelItemCount(), static_cast<int>(e.pools.size()));
    QTreeWidgetItem* pool_row = nullptr;
    for (int i = 0; i < tree->topLevelItemCount(); ++i)
      if (tree->topLevelItem(i)->text(0) == "oom pool") pool_row = tree->topLevelItem(i);
    QVERIFY(pool_row);
    QCOMPARE(pool_row->text(1), QString("30 MiB does not fit"));
    QCOMPARE(pool_row->childCount(), OomScenario::kSegments);
    QTreeWidgetItem* block = pool_row->child(0)->child(0);
    QVERIFY(block);
    tree->setCurrentItem(block);
    QVERIFY2(x.stackText().contains("view_traces.hpp"), qPrintable(x.stackText()));
  }

  void theMomentShownIsExplainedWithoutARequest() {
    OomExplainer x;
    x.resize(900, 600);
    x.setSession(s_);
    const Summary& sum = s_->whole().summary;
    // The mark: after the fill, before the large blocks are freed; no oom
    // event there, so nothing is requested.
    QCOMPARE(s_->whole().marks.size(), 1u);
    const std::uint64_t t = s_->whole().marks[0].time_ns;
    QVERIFY(t < s_->ooms()[0].time_ns);
    x.setMoment(t);
    QCOMPARE(x.choice(), 0);
    QVERIFY(QTest::qWaitFor([&] { return x.isReady(); }, 10000));
    check_same(x.explanation(), s_->explain(t, 0));
    QCOMPARE(x.explanation().requested, 0u);
    for (int i = 0; i < x.tree()->topLevelItemCount(); ++i)
      QCOMPARE(x.tree()->topLevelItem(i)->text(1), QString("—"));
    // A later moment follows setMoment.
    x.setMoment(sum.last_event_ns);
    QVERIFY(QTest::qWaitFor([&] { return x.isReady(); }, 10000));
    check_same(x.explanation(), s_->explain(sum.last_event_ns, 0));
  }

  void choosingAnOomMovesTheFragmentationView() {
    FragmentationView v;
    v.resize(1300, 800);
    v.setSession(s_);
    QVERIFY(QTest::qWaitFor([&] { return v.isReady(); }, 10000));
    QSignalSpy moment(&v, &SessionView::momentSelected);
    v.explainer()->choose(1);
    const OomEvent& oom = s_->ooms()[0];
    QCOMPARE(v.currentPool(), oom.pool.value);
    QCOMPARE(v.moment(), oom.time_ns);
    QCOMPARE(moment.count(), 1);
    QVERIFY(QTest::qWaitFor([&] { return v.isReady() && v.explainer()->isReady(); }, 10000));
    // The segment rows at the oom: three segments, each a small live block
    // and an inactive split.
    QCOMPARE(static_cast<int>(v.rows()->rows().size()), OomScenario::kSegments);
    for (const SegmentRow& r : v.rows()->rows()) {
      QCOMPARE(r.spans.size(), 2u);
      QVERIFY(r.spans[0].state == SpanState::allocated);
      QVERIFY(r.spans[1].state == SpanState::inactive_split);
    }
  }
};

QTEST_MAIN(OomExplainerTest)
#include "oom_explainer_test.moc"
