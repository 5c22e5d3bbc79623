// The Call tree tab's models on samples/leaks traced at test time: the
// CallTreeModel's rows hold exactly `memtrail export --format folded`'s
// stacks and sums for every cost, bottom-up and top-down alike; the filter
// keeps matching rows with their ancestors (and descendants) and nothing
// else; a range's tree holds the range's folded stacks; the top-site lists
// are `memtrail report --json`'s; the view builds, switches and shoots.
#include <QImage>
#include <QTreeView>
#include <QtTest>
#include <functional>
#include <set>

#include "call_tree_model.hpp"
#include "call_tree_view.hpp"
#include "folded_lines.hpp"
#include "gui_traces.hpp"
#include "memtrail/call_tree.hpp"
#include "memtrail/site_filter.hpp"
#include "top_sites_model.hpp"

using namespace memtrail;
using gui::CallTreeModel;
using test::run_command;
using test::shell_quote;

namespace {

constexpr TreeCost kAllCosts[] = {TreeCost::peak, TreeCost::allocations, TreeCost::temporary,
                                  TreeCost::leaked, TreeCost::bytes};

test::FoldedLines foldedExport(TreeCost cost, const std::string& range = "") {
  auto r = run_command(std::string(MEMTRAIL_BIN) + " export --format folded --cost " +
                       tree_cost_name(cost) + range + " " + shell_quote(test::leaksTrace()));
  return r.exit_code == 0 ? test::parse_folded(r.out) : test::FoldedLines{{"(export failed)", 1}};
}

std::uint64_t number(const CallTreeModel& m, const QModelIndex& i, int column) {
  return m.data(i.siblingAtColumn(column), CallTreeModel::kNumberRole).toULongLong();
}

// A top-sites list against `report --json`'s (top_sites.<order>), row by
// row and every column: the four numbers, and the site as `report` names it
// (its caller, with its pool in brackets when the trace has several).
void compareWithReport(const gui::TopSitesModel& m, const nlohmann::json& want) {
  using Col = gui::TopSitesModel::Column;
  QCOMPARE(m.rowCount(), static_cast<int>(want.size()));
  const std::pair<Col, const char*> numbers[] = {{Col::calls, "calls"},
                                                 {Col::allocated, "bytes_allocated"},
                                                 {Col::at_peak, "peak_bytes"},
                                                 {Col::temporary, "temporaries"}};
  static_assert(std::size(numbers) + 1 == gui::TopSitesModel::column_count);
  for (int r = 0; r < m.rowCount(); ++r) {
    for (const auto& [column, key] : numbers)
      QCOMPARE(m.data(m.index(r, column), gui::TopSitesModel::kNumberRole).toULongLong(),
               want[r][key].get<std::uint64_t>());
    const QString site = m.data(m.index(r, Col::site), Qt::DisplayRole).toString();
    const QString caller = QString::fromStdString(want[r]["caller"].get<std::string>());
    const QString pool = QString::fromStdString(want[r]["pool"].get<std::string>());
    QVERIFY2(site == caller || site == caller + QStringLiteral("  [%1]").arg(pool),
             qPrintable(site + " vs " + caller));
  }
}

// Every row of the model, depth first, with the names from the top level.
void walk(const CallTreeModel& m, const QModelIndex& parent, std::vector<QString>& names,
          const std::function<void(const QModelIndex&, const std::vector<QString>&)>& visit) {
  for (int r = 0; r < m.rowCount(parent); ++r) {
    const QModelIndex i = m.index(r, 0, parent);
    names.push_back(i.data().toString());
    visit(i, names);
    walk(m, i, names, visit);
    names.pop_back();
  }
}

// The model's stacks as folded lines, read through the model's rows: the
// path of names to each row with its self cost ("[pool]" first, then the
// frames outermost first, as the export writes them).
test::FoldedLines modelLines(const CallTreeModel& m, TreeCost cost) {
  test::FoldedLines out;
  const bool bottom_up = m.tree()->direction == TreeDirection::bottom_up;
  std::vector<QString> names;
  walk(m, {}, names, [&](const QModelIndex& i, const std::vector<QString>& path) {
    const std::uint64_t self = number(m, i, CallTreeModel::columnOf(cost, true));
    if (self == 0) return;
    std::vector<QString> p = path;
    const std::size_t first = p[0].startsWith('[') && p[0].endsWith(']') ? 1 : 0;
    if (bottom_up) std::reverse(p.begin() + static_cast<std::ptrdiff_t>(first), p.end());
    QString line;
    for (const QString& n : p) line += (line.isEmpty() ? "" : ";") + n;
    out[line.toStdString()] += self;
  });
  return out;
}

std::uint64_t topLevelSum(const CallTreeModel& m, int column) {
  std::uint64_t s = 0;
  for (int r = 0; r < m.rowCount(); ++r) s += number(m, m.index(r, 0), column);
  return s;
}

std::uint64_t sum(const test::FoldedLines& lines) {
  std::uint64_t s = 0;
  for (const auto& [path, c] : lines) s += c;
  return s;
}

}  // namespace

class CallTreeModelTest : public QObject {
  Q_OBJECT

  std::shared_ptr<const Session> session_;
  std::shared_ptr<const Analysis> whole_;

  std::shared_ptr<const CallTree> tree(TreeDirection d, const Analysis* a = nullptr) {
    return std::make_shared<const CallTree>(build_call_tree(a ? *a : *whole_, d));
  }

 private slots:
  void initTestCase() {
    std::string error;
    session_ = test::leaksSession(&error);
    QVERIFY2(session_, error.c_str());
    whole_ = std::shared_ptr<const Analysis>(session_, &session_->whole());
  }

  // Both directions: the rows' stacks are the folded lines, the top-level
  // rows' inclusive costs add up to the export's sum.
  void treeTotalsEqualFoldedExport() {
    for (TreeDirection d : {TreeDirection::top_down, TreeDirection::bottom_up}) {
      CallTreeModel m;
      m.setTree(tree(d));
      for (TreeCost c : kAllCosts) {
        const test::FoldedLines want = foldedExport(c);
        QVERIFY2(!want.empty(), tree_cost_name(c));
        QVERIFY2(modelLines(m, c) == want, tree_cost_name(c));
        QCOMPARE(topLevelSum(m, CallTreeModel::columnOf(c, false)), sum(want));
      }
    }
  }

  // The same costs, however the tree is turned; the documented sample
  // figures: 9,085 B leaked, 25 temporary allocations in make_temporaries.
  void bottomUpEqualsTopDown() {
    CallTreeModel down, up;
    down.setTree(tree(TreeDirection::top_down));
    up.setTree(tree(TreeDirection::bottom_up));
    for (TreeCost c : kAllCosts) {
      QCOMPARE(topLevelSum(up, CallTreeModel::columnOf(c, false)),
               topLevelSum(down, CallTreeModel::columnOf(c, false)));
      QVERIFY(modelLines(up, c) == modelLines(down, c));
    }
    QCOMPARE(topLevelSum(down, CallTreeModel::leaked), 9085u);
    std::uint64_t temporaries = 0;
    std::vector<QString> names;
    walk(down, {}, names, [&](const QModelIndex& i, const std::vector<QString>&) {
      if (i.data().toString().contains("make_temporaries"))
        temporaries += number(down, i, CallTreeModel::temporary);
    });
    QCOMPARE(temporaries, 25u);
  }

  // Every row shown matches, or has a matching ancestor or descendant; every
  // matching node is shown; unrelated rows are not. By function, file and
  // module alike.
  void filterKeepsMatchingRowsAndAncestors() {
    for (const QString text : {"leak_calloc", "LEAKS.CPP", "libc.so"}) {
      CallTreeModel m;
      auto t = tree(TreeDirection::top_down);
      m.setTree(t);
      const int before = m.rowCount();
      m.setFilter(text);
      auto matches = [&](std::uint32_t n) {
        const TreeSymbol& s = t->symbols[t->nodes[n].symbol];
        auto has = [&](const std::string& x) {
          return QString::fromStdString(x).contains(text, Qt::CaseInsensitive);
        };
        return has(s.name) || has(s.file) || has(s.module);
      };
      std::function<bool(std::uint32_t)> below = [&](std::uint32_t n) {
        for (std::uint32_t c : t->children(n))
          if (matches(c) || below(c)) return true;
        return false;
      };
      auto above = [&](std::uint32_t n) {
        for (std::uint32_t p = t->nodes[n].parent; p != CallTree::kRoot; p = t->nodes[p].parent)
          if (matches(p)) return true;
        return false;
      };
      std::set<std::uint32_t> shown;
      std::vector<QString> names;
      walk(m, {}, names, [&](const QModelIndex& i, const std::vector<QString>&) {
        const std::uint32_t n = m.node(i);
        shown.insert(n);
        QVERIFY2(matches(n) || below(n) || above(n),
                 qPrintable(QString::fromStdString(t->path(n))));
      });
      int matching = 0;
      for (std::uint32_t n = 1; n < t->nodes.size(); ++n) {
        if (!matches(n)) continue;
        ++matching;
        QVERIFY2(shown.count(n), qPrintable(QString::fromStdString(t->path(n))));
        for (std::uint32_t p = t->nodes[n].parent; p != CallTree::kRoot; p = t->nodes[p].parent)
          QVERIFY(shown.count(p));  // ancestors kept
      }
      QVERIFY2(matching > 0, qPrintable(text));
      QVERIFY(shown.size() < t->nodes.size() - 1);  // something was filtered out
      QVERIFY(m.rowCount() <= before);
      m.setFilter("");
      QCOMPARE(m.rowCount(), before);
    }
    CallTreeModel none;
    none.setTree(tree(TreeDirection::bottom_up));
    none.setFilter("no function is called this");
    QCOMPARE(none.rowCount(), 0);
  }

  // A range's tree holds the range's folded stacks (export --from/--to) and
  // fewer allocations than the whole trace's.
  void rangeFilteringChangesTotals() {
    // The sample's timing varies from run to run (its exit phase may take
    // most of the trace): end the range between two allocations, at the
    // median alloc time of the largest blocks.
    const Summary& s = whole_->summary;
    const std::uint64_t t0 = s.first_event_ns;
    const auto blocks = session_->largest_blocks(t0, s.last_event_ns, 64);
    QVERIFY(blocks.size() >= 2);
    // The alloc time just before the median block's: that block is out.
    const std::size_t mid = blocks.size() / 2;
    std::size_t b = mid;
    while (b > 0 && blocks[b - 1].alloc_ns == blocks[mid].alloc_ns) --b;
    QVERIFY(b > 0);
    const std::uint64_t t1 = blocks[b - 1].alloc_ns;
    auto part = session_->analyze_range(t0, t1);
    QVERIFY(part && part->error.empty());
    const std::string range =
        " --from " + std::to_string(t0) + "ns --to " + std::to_string(t1) + "ns";
    CallTreeModel whole, ranged;
    whole.setTree(tree(TreeDirection::bottom_up));
    ranged.setTree(tree(TreeDirection::bottom_up, part.get()));
    for (TreeCost c : kAllCosts) {
      const test::FoldedLines want = foldedExport(c, range);
      QVERIFY2(modelLines(ranged, c) == want, tree_cost_name(c));
      QCOMPARE(topLevelSum(ranged, CallTreeModel::columnOf(c, false)), sum(want));
    }
    const std::uint64_t in_range = topLevelSum(ranged, CallTreeModel::allocations);
    QCOMPARE(in_range, part->summary.allocations);
    QVERIFY(in_range > 0);
    QVERIFY(in_range < topLevelSum(whole, CallTreeModel::allocations));
  }

  // Sorting orders the top-level rows by the column, both ways.
  void sortsByAnyCostColumn() {
    CallTreeModel m;
    m.setTree(tree(TreeDirection::bottom_up));
    for (int column : {int(CallTreeModel::bytes), int(CallTreeModel::allocations)}) {
      m.sort(column, Qt::DescendingOrder);
      for (int r = 1; r < m.rowCount(); ++r)
        QVERIFY(number(m, m.index(r - 1, 0), column) >= number(m, m.index(r, 0), column));
      m.sort(column, Qt::AscendingOrder);
      for (int r = 1; r < m.rowCount(); ++r)
        QVERIFY(number(m, m.index(r - 1, 0), column) <= number(m, m.index(r, 0), column));
    }
  }

  // The lists `memtrail report` prints, row by row.
  void topSitesAreTheReports() {
    const nlohmann::json report = test::reportJson(test::leaksTrace());
    QVERIFY(!report.is_null());
    const std::pair<const char*, SiteOrder> lists[] = {{"peak", SiteOrder::peak},
                                                       {"calls", SiteOrder::calls},
                                                       {"temporaries", SiteOrder::temporaries},
                                                       {"bytes", SiteOrder::bytes}};
    for (const auto& [name, order] : lists) {
      gui::TopSitesModel m;
      m.setAnalysis(whole_, order, 0);
      QVERIFY(m.rowCount() > 0);
      compareWithReport(m, report["top_sites"][name]);
    }
  }

  // A filter keeps the report's ranking among the matching sites: the rows
  // of `report --filter-function NAME` (a function name that no file or
  // module of the trace contains, so both filters keep the same sites).
  void topSitesFilterIsTheReportsFilter() {
    for (const char* name : {"leak_calloc", "leak_in_threads", "leak_plain_mallocs"}) {
      const nlohmann::json report =
          test::reportJson(test::leaksTrace(), std::string("--filter-function ") + name);
      QVERIFY2(!report.is_null(), name);
      for (const auto& [list, order] :
           {std::pair{"peak", SiteOrder::peak}, std::pair{"calls", SiteOrder::calls},
            std::pair{"temporaries", SiteOrder::temporaries},
            std::pair{"bytes", SiteOrder::bytes}}) {
        gui::TopSitesModel m;
        m.setFilter(QString::fromLatin1(name).toUpper());  // the GUI's filter ignores case
        m.setAnalysis(whole_, order, 0);
        compareWithReport(m, report["top_sites"][list]);
      }
    }
    // Something was filtered out, and the filter comes off.
    gui::TopSitesModel m;
    m.setAnalysis(whole_, SiteOrder::calls, 0);
    const int all = m.rowCount();
    m.setFilter("leak_calloc");
    QVERIFY2(m.rowCount() > 0 && m.rowCount() < all, qPrintable(QString::number(m.rowCount())));
    m.setFilter({});
    QCOMPARE(m.rowCount(), all);
  }

  // The view builds the bottom-up tree off the GUI thread, then the
  // top-down one when asked; its heading gives the totals.
  void viewBuildsBothDirections() {
    gui::CallTreeView v;
    QSignalSpy ready(&v, &gui::SessionView::ready);
    v.setSession(session_);
    const Summary& s = whole_->summary;
    v.setRange(s.first_event_ns, s.last_event_ns, whole_);
    QTRY_VERIFY(v.isReady());
    QCOMPARE(v.direction(), TreeDirection::bottom_up);
    QVERIFY(v.model()->rowCount() > 0);
    QVERIFY2(v.headingText().contains("whole trace"), qPrintable(v.headingText()));
    QVERIFY(v.tree()->isColumnHidden(CallTreeModel::peak_self));
    v.setDirection(TreeDirection::top_down);
    QTRY_COMPARE(v.model()->tree()->direction, TreeDirection::top_down);
    QVERIFY(v.isReady());
    QVERIFY(!v.tree()->isColumnHidden(CallTreeModel::peak_self));
    // A top site's row opens and is selected, and it is that site's path.
    const SiteId top = top_sites(*whole_, SiteOrder::temporaries, 1).at(0);
    QVERIFY(v.showSite(top));
    const std::uint32_t n = v.model()->node(v.tree()->currentIndex());
    QCOMPARE(n, find_site_node(*v.model()->tree(), *whole_, at(whole_->sites, top)));
    QVERIFY(v.model()->tree()->self(n)[TreeCost::temporary] >= at(whole_->sites, top).temporaries);
    v.setFilter("leak_calloc");
    QVERIFY(v.model()->rowCount() > 0);
    // The same box filters the top sites under the tree.
    QCOMPARE(v.topSites()->filter(), QStringLiteral("leak_calloc"));
    for (int r = 0; r < v.topSites()->rowCount(); ++r) {
      const auto id = v.topSites()->data(v.topSites()->index(r, 0), gui::TopSitesModel::kSiteRole);
      QVERIFY(
          SiteFilter::search_box("leak_calloc")
              .matches(at(whole_->sites, SiteId{static_cast<std::uint32_t>(id.toULongLong())})));
    }
    QVERIFY(!v.showSite(top));  // make_temporaries' row is filtered out
  }

  void screenshotOfTheTreeView() {
    const std::string png = test::guiTempDir() / "shot-tree.png";
    auto r = run_command("env -u QT_QPA_PLATFORM -u DISPLAY " MEMTRAIL_GUI_BIN " " +
                         shell_quote(test::leaksTrace()) + " --screenshot " + shell_quote(png) +
                         " --view tree --size 900x700");
    QVERIFY2(r.exit_code == 0, r.err.c_str());
    QImage image(QString::fromStdString(png));
    QCOMPARE(image.size(), QSize(900, 700));
    std::remove(png.c_str());
  }
};

QTEST_MAIN(CallTreeModelTest)
#include "call_tree_model_test.moc"
