// The Caller/Callee tab on samples/leaks traced at test time: every cell of
// the function list and of the caller and callee tables equals the
// analyzer's build_caller_callee and the costs derived from the call trees
// (self = the bottom-up tree's first level, inclusive = the top-down nodes
// without the function above them); a range shows the range's figures and
// keeps the selected function; a double click on a caller or callee selects
// it; the filter is the GUI's one rule; `--screenshot --view callee` shoots.
#include <QImage>
#include <QLineEdit>
#include <QTabWidget>
#include <QTreeView>
#include <QtTest>
#include <algorithm>
#include <vector>

#include "caller_callee_agrees.hpp"
#include "caller_callee_model.hpp"
#include "caller_callee_view.hpp"
#include "gui_traces.hpp"
#include "memtrail/caller_callee.hpp"
#include "memtrail/site_filter.hpp"

using namespace memtrail;
using gui::CallerCalleeModel;
using gui::CallerCalleeView;
using test::run_command;
using test::shell_quote;

namespace {

constexpr TreeCost kAllCosts[] = {TreeCost::peak, TreeCost::allocations, TreeCost::temporary,
                                  TreeCost::leaked, TreeCost::bytes};
const QString kCalloc = QStringLiteral("(anonymous namespace)::leak_calloc()");

std::uint64_t cell(const CallerCalleeModel& m, int row, TreeCost cost, bool self) {
  return m
      .data(m.index(row, CallerCalleeModel::columnOf(cost, self)), CallerCalleeModel::kNumberRole)
      .toULongLong();
}

TreeCosts rowCosts(const CallerCalleeModel& m, int row, bool self) {
  TreeCosts c;
  for (TreeCost cost : kAllCosts) c[cost] = cell(m, row, cost, self);
  return c;
}

QString name(const CallerCalleeModel& m, int row) {
  return m.data(m.index(row, CallerCalleeModel::function), Qt::DisplayRole).toString();
}

// A map's entry, zero when it has none (a function that allocates nothing
// itself has no first-level row in the bottom-up tree).
template <class Map, class Key>
TreeCosts entry(const Map& m, const Key& k) {
  auto it = m.find(k);
  return it == m.end() ? TreeCosts{} : it->second;
}

void waitReady(CallerCalleeView& v) {
  QTRY_VERIFY_WITH_TIMEOUT(v.isReady(), 30000);
}

}  // namespace

class CallerCalleeViewTest : public QObject {
  Q_OBJECT

  std::shared_ptr<const Session> session_;
  std::shared_ptr<const Analysis> whole_;

  void showWhole(CallerCalleeView& v) {
    v.setSession(session_);
    const Summary& s = whole_->summary;
    v.setRange(s.first_event_ns, s.last_event_ns, whole_);
    waitReady(v);
  }

 private slots:
  void initTestCase() {
    std::string error;
    session_ = test::leaksSession(&error);
    QVERIFY2(session_, error.c_str());
    whole_ = std::shared_ptr<const Analysis>(session_, &session_->whole());
  }

  // Every row of the list: the analyzer's figures, and the call trees'.
  void functionListEqualsAnalyzerAndCallTree() {
    CallerCalleeView v;
    showWhole(v);
    const CallerCallee want = build_caller_callee(*whole_);
    const test::TreeDerived trees =
        test::derive_from_trees(build_call_tree(*whole_, TreeDirection::top_down),
                                build_call_tree(*whole_, TreeDirection::bottom_up));
    const CallerCalleeModel& m = *v.functions();
    QCOMPARE(m.rowCount(), static_cast<int>(want.functions.size()));
    QVERIFY(m.rowCount() > 10);
    TreeCosts self_sum;
    for (int r = 0; r < m.rowCount(); ++r) {
      const std::string n = name(m, r).toStdString();
      const FunctionCosts& f = want.functions.at(want.find(n));
      QVERIFY2(rowCosts(m, r, false) == f.inclusive, n.c_str());
      QVERIFY2(rowCosts(m, r, true) == f.self, n.c_str());
      QVERIFY2(rowCosts(m, r, false) == entry(trees.inclusive, n), n.c_str());
      QVERIFY2(rowCosts(m, r, true) == entry(trees.self, n), n.c_str());
      self_sum += rowCosts(m, r, true);
    }
    // The functions' self costs add up to the call tree's total.
    QVERIFY(self_sum == build_call_tree(*whole_, TreeDirection::top_down).total());
    QCOMPARE(self_sum[TreeCost::leaked], 9085u);  // the sample's documented leak
  }

  // For each function: its caller and callee rows are the call edges, with
  // the analyzer's and the call trees' costs.
  void callersAndCalleesEqualTheEdges() {
    CallerCalleeView v;
    showWhole(v);
    const CallerCallee want = build_caller_callee(*whole_);
    const test::TreeDerived trees =
        test::derive_from_trees(build_call_tree(*whole_, TreeDirection::top_down),
                                build_call_tree(*whole_, TreeDirection::bottom_up));
    int edges = 0;
    for (std::uint32_t f = 0; f < want.functions.size(); ++f) {
      QVERIFY(v.selectFunction(f));
      QCOMPARE(v.selectedFunction(), f);
      const std::string me = want.functions[f].symbol.name;
      QCOMPARE(v.callers()->rowCount(), static_cast<int>(want.functions[f].callers.size()));
      QCOMPARE(v.callees()->rowCount(), static_cast<int>(want.functions[f].callees.size()));
      for (int r = 0; r < v.callers()->rowCount(); ++r, ++edges) {
        const std::pair key{name(*v.callers(), r).toStdString(), me};
        QVERIFY(rowCosts(*v.callers(), r, false) == entry(trees.edge_inclusive, key));
        QVERIFY(rowCosts(*v.callers(), r, true) == entry(trees.edge_self, key));
      }
      for (int r = 0; r < v.callees()->rowCount(); ++r) {
        const std::pair key{me, name(*v.callees(), r).toStdString()};
        QVERIFY(rowCosts(*v.callees(), r, false) == entry(trees.edge_inclusive, key));
        QVERIFY(rowCosts(*v.callees(), r, true) == entry(trees.edge_self, key));
      }
    }
    QVERIFY(edges > 10);
    // leak_calloc: 640 B leaked, all from main, itself.
    QVERIFY(v.selectFunction(kCalloc));
    QCOMPARE(v.callers()->rowCount(), 1);
    QCOMPARE(name(*v.callers(), 0), QStringLiteral("main"));
    QCOMPARE(cell(*v.callers(), 0, TreeCost::leaked, false), 640u);
    QCOMPARE(cell(*v.callers(), 0, TreeCost::leaked, true), 640u);
    QVERIFY2(v.selectedText().contains("leak_calloc"), qPrintable(v.selectedText()));
  }

  // A range: the range's own figures (fewer allocations), the selected
  // function kept; the whole trace again gives the whole figures back.
  void rangeShowsTheRangesFigures() {
    const Summary& s = whole_->summary;
    const std::uint64_t t0 = s.first_event_ns;
    // The sample's timing varies from run to run: end the range at the
    // median allocation time of its largest blocks, with later ones left out.
    std::vector<std::uint64_t> times;
    for (const auto& b : session_->largest_blocks(t0, s.last_event_ns, 64))
      times.push_back(b.alloc_ns);
    QVERIFY(times.size() >= 2);
    std::sort(times.begin(), times.end());
    const std::uint64_t t1 = times[times.size() / 2];
    QVERIFY(times.back() > t1);
    auto part = session_->analyze_range(t0, t1);
    QVERIFY(part && part->error.empty());
    const CallerCallee want = build_caller_callee(*part);
    QVERIFY(want.total[TreeCost::allocations] > 0);
    QVERIFY(want.total[TreeCost::allocations] < whole_->summary.allocations);

    CallerCalleeView v;
    showWhole(v);
    QVERIFY(v.selectFunction(QStringLiteral("main")));
    v.setRange(t0, t1, part);
    waitReady(v);
    QVERIFY2(v.headingText().contains(" – "), qPrintable(v.headingText()));
    QCOMPARE(v.functions()->result()->functions[v.selectedFunction()].symbol.name,
             std::string("main"));
    const CallerCalleeModel& m = *v.functions();
    QCOMPARE(m.rowCount(), static_cast<int>(want.functions.size()));
    TreeCosts self_sum;
    for (int r = 0; r < m.rowCount(); ++r) {
      const FunctionCosts& f = want.functions.at(want.find(name(m, r).toStdString()));
      QVERIFY(rowCosts(m, r, false) == f.inclusive);
      QVERIFY(rowCosts(m, r, true) == f.self);
      self_sum += rowCosts(m, r, true);
    }
    QCOMPARE(self_sum[TreeCost::allocations], part->summary.allocations);
    QVERIFY(self_sum == build_call_tree(*part, TreeDirection::bottom_up).total());
    v.setRange(s.first_event_ns, s.last_event_ns, whole_);
    waitReady(v);
    TreeCosts whole_sum;
    for (int r = 0; r < m.rowCount(); ++r) whole_sum += rowCosts(m, r, true);
    QCOMPARE(whole_sum[TreeCost::allocations], whole_->summary.allocations);
    QVERIFY2(v.headingText().contains("whole trace"), qPrintable(v.headingText()));
  }

  // A double click on a caller selects it; on a callee of that, back down.
  void doubleClickNavigates() {
    CallerCalleeView v;
    v.resize(1200, 800);
    v.show();
    QVERIFY(QTest::qWaitForWindowExposed(&v));
    showWhole(v);
    QVERIFY(v.selectFunction(kCalloc));
    QTreeView* callers = v.callerView();
    QVERIFY(callers->model()->rowCount() > 0);
    QRect rect = callers->visualRect(callers->model()->index(0, 0));
    // QTest's double click on an item view needs the click before it (the
    // view takes the pressed row from the first press).
    QTest::mouseClick(callers->viewport(), Qt::LeftButton, {}, rect.center());
    QTest::mouseDClick(callers->viewport(), Qt::LeftButton, {}, rect.center());
    QTRY_COMPARE(v.functions()->result()->functions[v.selectedFunction()].symbol.name,
                 std::string("main"));
    // The list's current row follows.
    QCOMPARE(v.functions()->functionAt(v.functionView()->currentIndex().row()),
             v.selectedFunction());
    const int back = v.callees()->rowOf(v.functions()->result()->find(kCalloc.toStdString()));
    QVERIFY(back >= 0);
    QTreeView* callees = v.calleeView();
    callees->scrollTo(callees->model()->index(back, 0));
    rect = callees->visualRect(callees->model()->index(back, 0));
    QTest::mouseClick(callees->viewport(), Qt::LeftButton, {}, rect.center());
    QTest::mouseDClick(callees->viewport(), Qt::LeftButton, {}, rect.center());
    QTRY_COMPARE(QString::fromStdString(
                     v.functions()->result()->functions[v.selectedFunction()].symbol.name),
                 kCalloc);
  }

  // The box keeps the functions whose name, file or module holds the text
  // (SiteFilter::search_box's rule), any case; selecting a hidden function clears it.
  void filterIsTheGuisRule() {
    CallerCalleeView v;
    showWhole(v);
    const int all = v.functions()->rowCount();
    const CallerCallee& cc = *v.functions()->result();
    for (const QString text : {"LEAK_CALLOC", "leaks.cpp", "libc.so"}) {
      v.setFilter(text);
      const SiteFilter rule = SiteFilter::search_box(text.toStdString());
      int want = 0;
      for (const FunctionCosts& f : cc.functions) want += rule.matches(f.symbol);
      QVERIFY2(want > 0 && want < all, qPrintable(text));
      QCOMPARE(v.functions()->rowCount(), want);
      for (int r = 0; r < v.functions()->rowCount(); ++r)
        QVERIFY(rule.matches(cc.functions[v.functions()->functionAt(r)].symbol));
    }
    // A new range keeps the filter (the selected main is hidden by it).
    QVERIFY(v.selectFunction(QStringLiteral("main")));
    v.setFilter("leak_calloc");
    const Summary& s = whole_->summary;
    v.setRange(s.first_event_ns, s.last_event_ns, whole_);
    waitReady(v);
    QCOMPARE(v.functions()->filter(), QStringLiteral("leak_calloc"));
    QCOMPARE(v.functions()->rowCount(), 1);
    QCOMPARE(v.selectedFunction(), v.functions()->functionAt(0));
    QVERIFY(v.selectFunction(QStringLiteral("main")));  // hidden by the filter
    QVERIFY(v.findChild<QLineEdit*>()->text().isEmpty());
    QCOMPARE(v.functions()->rowCount(), all);
  }

  // Sorting orders the rows by the column, both ways.
  void sortsByAnyCostColumn() {
    CallerCalleeView v;
    showWhole(v);
    CallerCalleeModel& m = *v.functions();
    for (int column : {int(CallerCalleeModel::bytes), int(CallerCalleeModel::allocations_self)}) {
      const TreeCost c = CallerCalleeModel::costOf(column);
      const bool self = CallerCalleeModel::isSelfColumn(column);
      m.sort(column, Qt::DescendingOrder);
      for (int r = 1; r < m.rowCount(); ++r)
        QVERIFY(cell(m, r - 1, c, self) >= cell(m, r, c, self));
      m.sort(column, Qt::AscendingOrder);
      for (int r = 1; r < m.rowCount(); ++r)
        QVERIFY(cell(m, r - 1, c, self) <= cell(m, r, c, self));
    }
  }

  // The window has the tab; --view callee shoots it.
  void windowTabAndScreenshot() {
    test::TestWindow w;
    QVERIFY(w.viewIds().contains("callee"));
    QVERIFY(w.showView("callee"));
    auto* tabs = w.findChild<QTabWidget*>();
    QCOMPARE(tabs->tabText(tabs->currentIndex()), QStringLiteral("Caller/Callee"));
    const std::string png = test::guiTempDir() / "shot-callee.png";
    auto r = run_command("env -u QT_QPA_PLATFORM -u DISPLAY " MEMTRAIL_GUI_BIN " " +
                         shell_quote(test::leaksTrace()) + " --screenshot " + shell_quote(png) +
                         " --view callee --size 900x700");
    QVERIFY2(r.exit_code == 0, r.err.c_str());
    QImage image(QString::fromStdString(png));
    QCOMPARE(image.size(), QSize(900, 700));
    std::remove(png.c_str());
  }
};

QTEST_MAIN(CallerCalleeViewTest)
#include "caller_callee_view_test.moc"
