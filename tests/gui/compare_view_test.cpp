// The Compare tab on samples traced at test time: samples/pool-vs-malloc
// with 40 and 80 steps (the same sites and pools, more calls in B) and
// samples/leaks against pool-vs-malloc (leaks only in A, pools only in one
// side). Every row of the per-site and per-pool tables holds exactly
// `memtrail diff --json --top 0`'s numbers, in its order, for the whole
// traces and for a range (`--from/--to`, applied to both); the filter and
// the sort keep the rows' numbers; without a second trace, or with one that
// cannot be read, the tab says so and is ready; the overlaid timeline holds
// both traces; the differential flame graph's A and B sides are each
// trace's `export --format folded` lines, its boxes hold their children; File
// → Compare with… exists and --compare drives a screenshot. A's call tree is
// the window's shared one (CallTreeCache), not one built again for Compare.
#include <QAction>
#include <QMenu>
#include <QMenuBar>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTreeView>
#include <QtTest>

#include "call_tree_cache.hpp"
#include "compare_model.hpp"
#include "compare_timeline.hpp"
#include "compare_view.hpp"
#include "diff_flame.hpp"
#include "folded_lines.hpp"
#include "gui_args.hpp"
#include "gui_traces.hpp"
#include "main_window.hpp"
#include "views.hpp"

using namespace memtrail;
using gui::ComparePoolsModel;
using gui::CompareSitesModel;
using gui::CompareView;
using nlohmann::json;
using test::run_command;
using test::shell_quote;

namespace {

std::string poolVsMallocTrace(int steps) {
  return test::only_trace(
      test::recordRun(std::string(MEMTRAIL_POOL_VS_MALLOC_BIN) + " " + std::to_string(steps),
                      "pvm-" + std::to_string(steps)));
}

json diffJson(const std::string& a, const std::string& b, const std::string& range = "") {
  auto r = run_command(std::string(MEMTRAIL_BIN) + " diff --json --top 0" + range + " " +
                       shell_quote(a) + " " + shell_quote(b));
  return r.exit_code == 0 ? json::parse(r.out) : json();
}

std::shared_ptr<const Session> open(const std::string& path) {
  return path.empty() ? nullptr : Session::open(path).session;
}

// One cost cell against the JSON's {"a", "b", "delta"}.
bool cellEquals(const QAbstractItemModel& m, int row, int column, const json& pair) {
  const QModelIndex i = m.index(row, column);
  return i.data(CompareSitesModel::kARole).toULongLong() == pair["a"].get<std::uint64_t>() &&
         i.data(CompareSitesModel::kBRole).toULongLong() == pair["b"].get<std::uint64_t>() &&
         i.data(CompareSitesModel::kNumberRole).toLongLong() == pair["delta"].get<std::int64_t>();
}

// The sites table, row by row, is the JSON's site list.
void checkSites(const CompareSitesModel& m, const json& sites) {
  QCOMPARE(m.rowCount(), static_cast<int>(sites.size()));
  const std::pair<int, const char*> columns[] = {
      {CompareSitesModel::peak, "peak_bytes"},
      {CompareSitesModel::leaked, "leaked_bytes"},
      {CompareSitesModel::leaked_blocks, "leaked_blocks"},
      {CompareSitesModel::calls, "calls"},
      {CompareSitesModel::allocated, "bytes_allocated"}};
  for (int r = 0; r < m.rowCount(); ++r) {
    const json& s = sites[static_cast<std::size_t>(r)];
    QCOMPARE(m.index(r, CompareSitesModel::pool).data().toString().toStdString(),
             s["pool"].get<std::string>());
    QCOMPARE(
        m.index(r, CompareSitesModel::impact).data(CompareSitesModel::kNumberRole).toULongLong(),
        s["impact"].get<std::uint64_t>());
    for (auto [column, key] : columns) QVERIFY2(cellEquals(m, r, column, s[key]), key);
    // The stack shown is the JSON's, innermost frame first.
    const QString stack = m.index(r, CompareSitesModel::site).data(Qt::ToolTipRole).toString();
    const std::string first =
        s["stack"].empty() ? "" : s["stack"][0]["function"].get<std::string>();
    QVERIFY2(stack.startsWith(QString::fromStdString(first)), qPrintable(stack));
  }
}

void checkPools(const ComparePoolsModel& m, const json& pools) {
  QCOMPARE(m.rowCount(), static_cast<int>(pools.size()));
  const std::pair<int, const char*> columns[] = {
      {ComparePoolsModel::peak_used, "peak_used_bytes"},
      {ComparePoolsModel::peak_reserved, "peak_reserved_bytes"},
      {ComparePoolsModel::leaked, "leaked_bytes"},
      {ComparePoolsModel::allocations, "allocations"}};
  for (int r = 0; r < m.rowCount(); ++r) {
    const json& p = pools[static_cast<std::size_t>(r)];
    QCOMPARE(m.index(r, ComparePoolsModel::pool).data().toString().toStdString(),
             p["name"].get<std::string>());
    const QString in = m.index(r, ComparePoolsModel::present).data().toString();
    QCOMPARE(in, !p["in_a"].get<bool>()   ? QString("only in B")
                 : !p["in_b"].get<bool>() ? QString("only in A")
                                          : QString("both"));
    QCOMPARE(
        m.index(r, ComparePoolsModel::impact).data(ComparePoolsModel::kNumberRole).toULongLong(),
        p["impact"].get<std::uint64_t>());
    for (auto [column, key] : columns) QVERIFY2(cellEquals(m, r, column, p[key]), key);
  }
}

void checkSummary(const DiffResult& d, const json& summary) {
  QCOMPARE(d.summary[0].peak_used_bytes, summary["peak_used_bytes"]["a"].get<std::uint64_t>());
  QCOMPARE(d.summary[1].peak_used_bytes, summary["peak_used_bytes"]["b"].get<std::uint64_t>());
  QCOMPARE(d.summary[0].leaked.bytes, summary["leaked_bytes"]["a"].get<std::uint64_t>());
  QCOMPARE(d.summary[1].leaked.bytes, summary["leaked_bytes"]["b"].get<std::uint64_t>());
  QCOMPARE(d.summary[0].allocations, summary["allocations"]["a"].get<std::uint64_t>());
  QCOMPARE(d.summary[1].allocations, summary["allocations"]["b"].get<std::uint64_t>());
}

}  // namespace

class CompareViewTest : public QObject {
  Q_OBJECT

  std::string a_, b_, leaks_;
  std::shared_ptr<const Session> session_a_, session_leaks_;

  // A view showing `a` (whole trace, or [t0, t1]) against `b`, ready.
  bool showCompare(CompareView& view, std::shared_ptr<const Session> a, const std::string& b,
                   std::optional<std::pair<std::uint64_t, std::uint64_t>> range = {}) {
    QSignalSpy ready(&view, &gui::SessionView::ready);
    view.setSession(a);
    const Summary& s = a->whole().summary;
    if (range)
      view.setRange(range->first, range->second, a->analyze_range(range->first, range->second));
    else
      view.setRange(s.first_event_ns, s.last_event_ns,
                    std::shared_ptr<const Analysis>(a, &a->whole()));
    if (!b.empty()) view.openCompare(QString::fromStdString(b));
    return QTest::qWaitFor([&] { return view.isReady(); }, 60000);
  }

 private slots:
  void initTestCase() {
    a_ = poolVsMallocTrace(40);
    b_ = poolVsMallocTrace(80);
    leaks_ = test::leaksTrace();
    QVERIFY2(!a_.empty() && !b_.empty() && !leaks_.empty(), "recording the samples failed");
    session_a_ = open(a_);
    session_leaks_ = open(leaks_);
    QVERIFY(session_a_ && session_leaks_);
  }

  // Whole traces: the tables are `memtrail diff --json --top 0`, row by row.
  void tablesEqualDiffJson_data() {
    QTest::addColumn<bool>("leaksFirst");
    QTest::newRow("pool-vs-malloc 40 -> 80") << false;
    QTest::newRow("leaks -> pool-vs-malloc 40") << true;
  }
  void tablesEqualDiffJson() {
    QFETCH(bool, leaksFirst);
    const std::string a = leaksFirst ? leaks_ : a_, b = leaksFirst ? a_ : b_;
    const json want = diffJson(a, b);
    QVERIFY2(want.contains("sites"), "memtrail diff --json failed");
    QVERIFY(!want["sites"].empty());
    CompareView view;
    QVERIFY(showCompare(view, leaksFirst ? session_leaks_ : session_a_, b));
    QVERIFY(view.diff());
    checkSummary(*view.diff(), want["summary"]);
    checkSites(*view.sitesModel(), want["sites"]);
    checkPools(*view.poolsModel(), want["pools"]);
    if (leaksFirst) {  // leaked bytes only in A: the deltas are negative
      QCOMPARE(want["summary"]["leaked_bytes"]["a"].get<std::uint64_t>(), 9085u);
      QVERIFY(view.headingText().contains(QString::fromUtf8("−8.87 KiB")));
    }
  }

  // A's tree is the one in the window's cache (built once, shared with the
  // Call tree and Flame graph tabs); the numbers stay diff --json's.
  void treeOfAIsTheSharedOne() {
    gui::CallTreeCache trees;
    CompareView view(&trees);
    QVERIFY(showCompare(view, session_a_, b_));
    const Analysis* whole = &session_a_->whole();
    QVERIFY(view.flame()->treeA() && view.flame()->treeB());
    QCOMPARE(view.flame()->treeA().get(), trees.tree(whole, TreeDirection::top_down).get());
    QCOMPARE(trees.builds(), std::size_t{1});
    // A second tab asking for it gets the same tree, built no more.
    std::shared_ptr<const CallTree> asked;
    trees.request(std::shared_ptr<const Analysis>(session_a_, whole), TreeDirection::top_down,
                  &view, [&](std::shared_ptr<const CallTree> t) { asked = std::move(t); });
    QVERIFY(QTest::qWaitFor([&] { return asked != nullptr; }, 10000));
    QCOMPARE(asked.get(), view.flame()->treeA().get());
    QCOMPARE(trees.builds(), std::size_t{1});
    const json want = diffJson(a_, b_);
    QVERIFY(want.contains("sites"));
    checkSummary(*view.diff(), want["summary"]);
    checkSites(*view.sitesModel(), want["sites"]);
    checkPools(*view.poolsModel(), want["pools"]);
  }

  // A range: B gets the same range, as `diff --from/--to` gives both.
  void rangeEqualsDiffJsonFromTo() {
    const Summary& s = session_a_->whole().summary;
    const std::uint64_t t0 = s.first_event_ns + (s.last_event_ns - s.first_event_ns) / 4;
    const std::uint64_t t1 = s.first_event_ns + (s.last_event_ns - s.first_event_ns) / 2;
    const json want =
        diffJson(a_, b_, " --from " + std::to_string(t0) + " --to " + std::to_string(t1));
    const json whole = diffJson(a_, b_);
    QVERIFY(want.contains("sites") && whole.contains("sites"));
    QVERIFY(want["summary"]["allocations"] != whole["summary"]["allocations"]);
    CompareView view;
    QVERIFY(showCompare(view, session_a_, b_, std::make_pair(t0, t1)));
    checkSummary(*view.diff(), want["summary"]);
    checkSites(*view.sitesModel(), want["sites"]);
    checkPools(*view.poolsModel(), want["pools"]);
    QVERIFY(view.headingText().contains("range"));
    // The chart spans the range, both curves within it.
    for (const auto& c : view.timeline()->curves()) {
      QVERIFY(!c.envelope.time_ns.empty());
      QVERIFY(c.envelope.time_ns.front() >= t0 && c.envelope.time_ns.back() <= t1);
    }
  }

  // The filter keeps the rows whose pool or frames match, with their numbers;
  // sorting by a column orders by its signed delta.
  void filterAndSortKeepNumbers() {
    CompareView view;
    QVERIFY(showCompare(view, session_leaks_, a_));
    CompareSitesModel& m = *view.sitesModel();
    const int all = m.rowCount();
    view.setFilter("leak_calloc");
    QVERIFY(m.rowCount() > 0 && m.rowCount() < all);
    for (int r = 0; r < m.rowCount(); ++r) {
      QVERIFY(m.index(r, CompareSitesModel::site)
                  .data(Qt::ToolTipRole)
                  .toString()
                  .contains("leak_calloc"));
      QVERIFY(m.siteDelta(r).leaked[0].bytes > 0);
    }
    view.setFilter("BFC POOL");  // the pool's name, any case
    QVERIFY(m.rowCount() > 0);
    for (int r = 0; r < m.rowCount(); ++r) QCOMPARE(m.siteDelta(r).pool, std::string("bfc pool"));
    view.setFilter("no function is called this");
    QCOMPARE(m.rowCount(), 0);
    view.setFilter("");
    QCOMPARE(m.rowCount(), all);
    view.sitesView()->sortByColumn(CompareSitesModel::calls, Qt::AscendingOrder);
    for (int r = 1; r < m.rowCount(); ++r)
      QVERIFY(
          m.index(r - 1, CompareSitesModel::calls)
              .data(CompareSitesModel::kNumberRole)
              .toLongLong() <=
          m.index(r, CompareSitesModel::calls).data(CompareSitesModel::kNumberRole).toLongLong());
    view.sitesView()->sortByColumn(CompareSitesModel::impact, Qt::DescendingOrder);
    checkSites(m, diffJson(leaks_, a_)["sites"]);  // back to the diff's order
  }

  // No B: ready, empty tables, a text saying how to open one. A B that is no
  // trace: ready, the reader's error, empty tables.
  void emptyAndFailedCompare() {
    CompareView view;
    QVERIFY(showCompare(view, session_a_, ""));
    QCOMPARE(view.sitesModel()->rowCount(), 0);
    QCOMPARE(view.poolsModel()->rowCount(), 0);
    QVERIFY(!view.diff());
    QVERIFY2(view.headingText().contains("No trace B"), qPrintable(view.headingText()));
    QCOMPARE(view.timeline()->axisMax(), 0u);

    const std::string junk = test::writeFile("not-a-trace.mtr", "hello");
    CompareView bad;
    QVERIFY(showCompare(bad, session_a_, junk));
    QVERIFY(!bad.compareError().isEmpty());
    QVERIFY2(bad.headingText().contains("Cannot load trace B"), qPrintable(bad.headingText()));
    QCOMPARE(bad.sitesModel()->rowCount(), 0);
    // A good B later replaces it.
    bad.openCompare(QString::fromStdString(b_));
    QVERIFY(QTest::qWaitFor([&] { return bad.isReady(); }, 60000));
    QVERIFY(bad.sitesModel()->rowCount() > 0);
    QVERIFY(bad.compareError().isEmpty());
  }

  // Both traces overlaid: distinct colours, each curve's peak is its trace's
  // peak of used bytes, the axis fits the larger.
  void timelineOverlaysBothTraces() {
    CompareView view;
    QVERIFY(showCompare(view, session_a_, b_));
    const auto& curves = view.timeline()->curves();
    QVERIFY(curves[0].colour != curves[1].colour);
    QVERIFY(curves[0].label.startsWith("A: ") && curves[1].label.startsWith("B: "));
    const std::uint64_t peak_a = view.diff()->summary[0].peak_used_bytes;
    const std::uint64_t peak_b = view.diff()->summary[1].peak_used_bytes;
    QCOMPARE(curves[0].envelope.max_of_all, peak_a);
    QCOMPARE(curves[1].envelope.max_of_all, peak_b);
    QCOMPARE(view.timeline()->axisMax(), std::max(peak_a, peak_b));
  }

  // Per cost, the diff tree's A side (and B side) read as folded lines is
  // A's (B's) `memtrail export --format folded`; every node is at least as
  // wide as its larger side and as its children; the root is as wide as the
  // sum over all call paths of the larger side.
  void diffFlameSidesEqualFoldedExports_data() {
    QTest::addColumn<bool>("leaksFirst");
    QTest::newRow("pool-vs-malloc 40 -> 80") << false;    // the same paths
    QTest::newRow("leaks -> pool-vs-malloc 40") << true;  // other paths: width > max(a, b)
  }
  void diffFlameSidesEqualFoldedExports() {
    QFETCH(bool, leaksFirst);
    const std::string a = leaksFirst ? leaks_ : a_, b = leaksFirst ? a_ : b_;
    CompareView view;
    QVERIFY(showCompare(view, leaksFirst ? session_leaks_ : session_a_, b));
    for (TreeCost cost : {TreeCost::peak, TreeCost::allocations, TreeCost::bytes}) {
      view.flame()->setCost(cost);
      const DiffTree* t = view.flame()->graph()->tree();
      QVERIFY(t && t->cost == cost);
      test::FoldedLines side[2];
      std::uint64_t larger_sum = 0;
      for (std::uint32_t n = 1; n < t->nodes.size(); ++n) {
        const DiffTreeNode& node = t->nodes[n];
        std::uint64_t self[2] = {node.a, node.b}, kids_w = 0;
        for (std::uint32_t c : t->children(n)) {
          self[0] -= t->nodes[c].a;
          self[1] -= t->nodes[c].b;
          kids_w += t->nodes[c].width;
        }
        for (int k = 0; k < 2; ++k)
          if (self[k]) side[k][t->path(n)] += self[k];
        larger_sum += std::max(self[0], self[1]);
        QVERIFY(node.width >= std::max(node.a, node.b) && node.width >= kids_w);
      }
      QCOMPARE(t->nodes[DiffTree::kRoot].width, larger_sum);
      for (int k = 0; k < 2; ++k) {
        auto r = run_command(std::string(MEMTRAIL_BIN) + " export --format folded --cost " +
                             tree_cost_name(cost) + " " + shell_quote(k == 0 ? a : b));
        QVERIFY2(r.exit_code == 0, r.err.c_str());
        QVERIFY2(side[k] == test::parse_folded(r.out), tree_cost_name(cost));
      }
      QVERIFY(!view.flame()->graph()->boxes().empty());
    }
    if (leaksFirst) return;
    // More calls in B on the pool sites: the root grows, drawn red.
    view.flame()->setCost(TreeCost::allocations);
    const DiffTreeNode& root = view.flame()->graph()->tree()->nodes[DiffTree::kRoot];
    QVERIFY(root.b > root.a);
    const QColor c = gui::diffColour(root.a, root.b);
    QVERIFY(c.red() > c.blue());
  }

  // The window: a Compare tab, File → Compare with…, --compare parsed.
  void windowHasCompareTabAndMenu() {
    test::TestWindow window;
    QVERIFY(window.viewIds().contains("compare"));
    bool found = false;
    for (QAction* a : window.menuBar()->actions().front()->menu()->actions())
      found = found || a->text().startsWith("Compare &with");
    QVERIFY(found);
    QCOMPARE(window.currentViewId(), QString("summary"));
    QVERIFY(gui::openCompareIn(window, QString::fromStdString(b_)));
    QCOMPARE(window.currentViewId(), QString("compare"));
    std::string error;
    auto args = gui::parse_gui_args({"a.mtr", "--compare", "b.mtr"}, &error);
    QVERIFY2(args, error.c_str());
    QCOMPARE(args->compare, std::string("b.mtr"));
    QVERIFY(!gui::parse_gui_args({"a.mtr", "--compare"}, &error));
  }

  // A part of a tab is a view id "ID-PART": compare-flame shows the Compare
  // tab with the differential flame graph in front (--view compare-flame).
  void compareFlameIsAViewOfItsOwn() {
    test::TestWindow window;
    QVERIFY(window.viewIds().contains("compare-flame"));
    auto* view = static_cast<gui::CompareView*>(window.view("compare"));
    QCOMPARE(window.view("compare-flame"), view);
    QVERIFY(!window.view("compare-nothing"));
    QVERIFY(!window.showView("summary-flame"));
    auto* tabs = qobject_cast<QTabWidget*>(view->flame()->parentWidget()->parentWidget());
    QVERIFY(tabs);
    QCOMPARE(tabs->currentWidget(), view->sitesView());
    QVERIFY(window.showView("compare-flame"));
    QCOMPARE(window.currentViewId(), QString("compare"));
    QCOMPARE(tabs->currentWidget(), view->flame());
    QVERIFY(window.showView("compare-sites"));
    QCOMPARE(tabs->currentWidget(), view->sitesView());

    const std::string png = test::guiTempDir() / "compare-flame.png";
    auto r = run_command(std::string(MEMTRAIL_GUI_BIN) + " " + shell_quote(a_) + " --compare " +
                         shell_quote(b_) + " --view compare-flame --size 1200x800 --screenshot " +
                         shell_quote(png));
    QVERIFY2(r.exit_code == 0, r.err.c_str());
    QCOMPARE(QImage(QString::fromStdString(png)).size(), QSize(1200, 800));
    std::remove(png.c_str());
  }

  // --view compare waits for the diff; without --compare it shows the empty
  // state; with --range B is analysed over the range. A B that cannot be
  // read still gives a picture (the tab says why).
  void screenshotOfCompare_data() {
    QTest::addColumn<QString>("extra");
    QTest::newRow("compare") << "--compare B";
    QTest::newRow("no compare") << "";
    QTest::newRow("range") << "--compare B --range 1ms:5ms";
    QTest::newRow("unreadable B") << "--compare JUNK";
  }
  void screenshotOfCompare() {
    QFETCH(QString, extra);
    const std::string junk = test::writeFile("junk.mtr", "junk");
    std::string args = extra.toStdString();
    if (auto at = args.find(" B"); at != std::string::npos)
      args.replace(at + 1, 1, shell_quote(b_));
    if (auto at = args.find("JUNK"); at != std::string::npos)
      args.replace(at, 4, shell_quote(junk));
    const std::string png = test::guiTempDir() / "compare.png";
    std::remove(png.c_str());
    auto r = run_command(std::string(MEMTRAIL_GUI_BIN) + " " + shell_quote(a_) + " " + args +
                         " --view compare --size 1200x800 --screenshot " + shell_quote(png));
    QVERIFY2(r.exit_code == 0, r.err.c_str());
    QImage image(QString::fromStdString(png));
    QCOMPARE(image.size(), QSize(1200, 800));
  }
};

QTEST_MAIN(CompareViewTest)
#include "compare_view_test.moc"
