// The flame graph on samples/leaks traced at test time: every frame's width
// is its share of `memtrail export --format folded`'s sum for the cost (the
// lines under its path), in both directions and when zoomed; the view builds,
// zooms on a click and shoots; in the window, the Call tree and Flame graph
// tabs share one tree per range and direction (CallTreeCache).
#include <QAction>
#include <QApplication>
#include <QImage>
#include <QtTest>
#include <cmath>

#include "call_tree_cache.hpp"
#include "call_tree_model.hpp"
#include "call_tree_view.hpp"
#include "flame_graph.hpp"
#include "flame_view.hpp"
#include "folded_lines.hpp"
#include "gui_traces.hpp"
#include "main_window.hpp"
#include "memtrail/call_tree.hpp"
#include "views.hpp"

using namespace memtrail;
using test::run_command;
using test::shell_quote;

namespace {

test::FoldedLines foldedExport(TreeCost cost) {
  auto r = run_command(std::string(MEMTRAIL_BIN) + " export --format folded --cost " +
                       tree_cost_name(cost) + " " + shell_quote(test::leaksTrace()));
  return r.exit_code == 0 ? test::parse_folded(r.out) : test::FoldedLines{};
}

// The folded lines at or under `path` (a top-down node's path).
std::uint64_t sumUnder(const test::FoldedLines& lines, const std::string& path) {
  std::uint64_t s = 0;
  for (const auto& [line, c] : lines)
    if (path.empty() || line == path || line.rfind(path + ";", 0) == 0) s += c;
  return s;
}

}  // namespace

class FlameGraphTest : public QObject {
  Q_OBJECT

  std::shared_ptr<const Session> session_;

 private slots:
  void initTestCase() {
    std::string error;
    session_ = test::leaksSession(&error);
    QVERIFY2(session_, error.c_str());
  }

  void widthsAreProportionalToFoldedSums() {
    const CallTree t = build_call_tree(session_->whole(), TreeDirection::top_down);
    const double width = 1000;
    for (TreeCost c : {TreeCost::peak, TreeCost::allocations, TreeCost::temporary, TreeCost::leaked,
                       TreeCost::bytes}) {
      const test::FoldedLines lines = foldedExport(c);
      const double total = static_cast<double>(sumUnder(lines, ""));
      QVERIFY2(total > 0, tree_cost_name(c));
      const auto boxes = gui::flameLayout(t, c, CallTree::kRoot, width, 0);
      QVERIFY(boxes.size() > 3);
      QCOMPARE(boxes.front().node, CallTree::kRoot);
      QCOMPARE(boxes.front().width, width);
      for (const gui::FlameBox& b : boxes) {
        const double want = static_cast<double>(sumUnder(lines, t.path(b.node))) / total * width;
        QVERIFY2(std::abs(b.width - want) < 1e-6,
                 qPrintable(QString::fromStdString(t.path(b.node))));
        // Children sit inside their parent, side by side.
        if (b.node == CallTree::kRoot) continue;
        const std::uint32_t parent = t.nodes[b.node].parent;
        const auto p = std::find_if(boxes.begin(), boxes.end(),
                                    [&](const gui::FlameBox& x) { return x.node == parent; });
        QVERIFY(p != boxes.end());
        QCOMPARE(b.depth, p->depth + 1);
        QVERIFY(b.x >= p->x - 1e-9 && b.x + b.width <= p->x + p->width + 1e-6);
      }
    }
  }

  // Zoomed into a frame: it spans the width, its callees keep their shares.
  void zoomSpansTheFrame() {
    auto t = std::make_shared<const CallTree>(
        build_call_tree(session_->whole(), TreeDirection::bottom_up));
    gui::FlameGraph g;
    g.resize(800, 600);
    g.setCost(TreeCost::allocations);
    g.setTree(t);
    QVERIFY(g.boxes().size() > 1);
    // A frame narrower than the whole (not the root, not the lone pool).
    const std::uint64_t total = t->total()[TreeCost::allocations];
    const auto it = std::find_if(g.boxes().begin(), g.boxes().end(), [&](const gui::FlameBox& b) {
      return t->nodes[b.node].inclusive[TreeCost::allocations] < total && b.width > 20;
    });
    QVERIFY(it != g.boxes().end());
    const gui::FlameBox first = *it;
    const QPoint inside(static_cast<int>(first.x + first.width / 2),
                        g.height() - (first.depth + 1) * 18 + 9);
    QCOMPARE(g.nodeAt(inside), first.node);
    QTest::mouseClick(&g, Qt::LeftButton, {}, inside);
    QCOMPARE(g.zoom(), first.node);
    QCOMPARE(g.boxes().front().width, 800.0);
    const double node_cost =
        static_cast<double>(t->nodes[first.node].inclusive[TreeCost::allocations]);
    for (const gui::FlameBox& b : g.boxes())
      QVERIFY(std::abs(b.width -
                       t->nodes[b.node].inclusive[TreeCost::allocations] / node_cost * 800) < 1e-6);
    QTest::keyClick(&g, Qt::Key_Escape);
    QCOMPARE(g.zoom(), CallTree::kRoot);
  }

  // Zoomed, Esc zooms out, not the window's Esc shortcut (the main window's
  // "Whole Trace"); not zoomed, the shortcut has it.
  void escapeZoomsOutBeforeTheWindowsShortcut() {
    QWidget window;
    auto* whole_trace = new QAction(&window);
    whole_trace->setShortcut(Qt::Key_Escape);
    window.addAction(whole_trace);
    QSignalSpy triggered(whole_trace, &QAction::triggered);
    auto* g = new gui::FlameGraph(&window);
    window.resize(800, 600);
    g->resize(800, 600);
    window.show();
    QApplication::setActiveWindow(&window);
    QVERIFY(QTest::qWaitForWindowActive(&window));
    g->setFocus();
    g->setTree(std::make_shared<const CallTree>(
        build_call_tree(session_->whole(), TreeDirection::top_down)));
    g->zoomTo(g->boxes().at(1).node);
    QVERIFY(g->zoom() != CallTree::kRoot);
    QTest::keyClick(g, Qt::Key_Escape);
    QCOMPARE(g->zoom(), CallTree::kRoot);
    QCOMPARE(triggered.count(), 0);
    QTest::keyClick(g, Qt::Key_Escape);
    QCOMPARE(triggered.count(), 1);
  }

  void viewBuildsAndShoots() {
    gui::FlameView v;
    v.setSession(session_);
    const Summary& s = session_->whole().summary;
    v.setRange(s.first_event_ns, s.last_event_ns,
               std::shared_ptr<const Analysis>(session_, &session_->whole()));
    QTRY_VERIFY(v.isReady());
    QVERIFY(v.graph()->tree() && v.graph()->tree()->direction == TreeDirection::top_down);
    v.setDirection(TreeDirection::bottom_up);
    QTRY_COMPARE(v.graph()->tree()->direction, TreeDirection::bottom_up);

    const std::string png = test::guiTempDir() / "shot-flame.png";
    auto r = run_command("env -u QT_QPA_PLATFORM -u DISPLAY " MEMTRAIL_GUI_BIN " " +
                         shell_quote(test::leaksTrace()) + " --screenshot " + shell_quote(png) +
                         " --view flame --size 900x700");
    QVERIFY2(r.exit_code == 0, r.err.c_str());
    QCOMPARE(QImage(QString::fromStdString(png)).size(), QSize(900, 700));
    std::remove(png.c_str());
  }

  // The two tabs that draw the range's call tree draw the same object, built
  // once per range and direction: at load one build per tab (bottom-up for
  // the tree, top-down for the flame graph), none for tab switches or for a
  // tab turning to the direction the other one built.
  void treeAndFlameTabsShareOneBuild() {
    test::TestWindow w;
    QVERIFY(test::openUntilAllReady(w, QString::fromStdString(test::leaksTrace())));
    auto* tree = static_cast<gui::CallTreeView*>(w.view("tree"));
    auto* flame = static_cast<gui::FlameView*>(w.view("flame"));
    auto* cache = w.findChild<gui::CallTreeCache*>();
    QVERIFY(cache);
    QCOMPARE(cache->builds(), 2u);
    for (const char* id : {"tree", "flame", "summary", "tree", "flame"}) {
      QVERIFY(w.showView(id));
      QTest::qWait(20);
    }
    QCOMPARE(cache->builds(), 2u);
    tree->setDirection(TreeDirection::top_down);
    QVERIFY(tree->isReady());  // at once: the flame tab's tree
    QCOMPARE(tree->model()->tree(), flame->graph()->tree());
    flame->setDirection(TreeDirection::bottom_up);
    tree->setDirection(TreeDirection::bottom_up);
    QVERIFY(flame->isReady() && tree->isReady());
    QCOMPARE(tree->model()->tree(), flame->graph()->tree());
    QCOMPARE(cache->builds(), 2u);
    // A range: both tabs now bottom-up, so one build for the two.
    const Summary& s = session_->whole().summary;
    w.applyRange(s.first_event_ns + (s.last_event_ns - s.first_event_ns) / 2, s.last_event_ns);
    QTRY_VERIFY_WITH_TIMEOUT(w.allViewsReady() && tree->isReady() && flame->isReady(), 30000);
    QCOMPARE(tree->model()->tree(), flame->graph()->tree());
    QCOMPARE(cache->builds(), 3u);
  }
};

QTEST_MAIN(FlameGraphTest)
#include "flame_graph_test.moc"
