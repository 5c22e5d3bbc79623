// LeaksView on samples/leaks: the largest site is selected and its source
// line shown from the repository (DWARF names it relative to the build
// directory); a libc frame whose file is not on disk says so.
#include <QLineEdit>
#include <QTextBlock>
#include <QTreeView>
#include <QtTest>

#include "gui_traces.hpp"
#include "leaks_model.hpp"
#include "leaks_view.hpp"
#include "memtrail/session.hpp"
#include "source_pane.hpp"

using namespace memtrail;

class LeaksViewTest : public QObject {
  Q_OBJECT

  std::shared_ptr<const Session> session_;

 private slots:
  void initTestCase() {
    std::string error;
    session_ = test::leaksSession(&error);
    QVERIFY2(session_, error.c_str());
  }

  // Issue 30, disagreement 6: where the site column is too narrow for a
  // label, the elided text still ends with the line number (it was cut off
  // the end).
  void aNarrowSiteColumnKeepsTheLineNumber() {
    gui::LeaksView v;
    v.resize(760, 600);
    v.show();
    v.setSession(session_);
    const Summary& s = session_->whole().summary;
    v.setRange(s.first_event_ns, s.last_event_ns,
               std::shared_ptr<const Analysis>(session_, &session_->whole()));
    QTreeView* tree = v.tree();
    QTest::qWait(50);
    int elided = 0;
    for (int r = 0; r < v.model()->rowCount(); ++r) {
      const QModelIndex i = v.model()->index(r, 0);
      const QString label = i.data().toString();
      const QRegularExpression line(":[0-9]+$");
      if (!label.contains(line)) continue;
      const int room = tree->visualRect(i).width() - 8;
      const QString shown = tree->fontMetrics().elidedText(label, tree->textElideMode(), room);
      if (shown == label) continue;
      ++elided;
      QVERIFY2(shown.contains(line), qPrintable(shown));
    }
    QVERIFY2(elided > 0, "no label is elided at this width");
  }

  // The filter box above the tree filters its rows; the totals stay the range's.
  void theFilterBoxFiltersTheRows() {
    gui::LeaksView v;
    v.setSession(session_);
    const Summary& s = session_->whole().summary;
    v.setRange(s.first_event_ns, s.last_event_ns,
               std::shared_ptr<const Analysis>(session_, &session_->whole()));
    const int all = v.model()->rowCount();
    const QString totals = v.totalsText();
    QTest::keyClicks(v.filter(), "leak_calloc");
    QCOMPARE(v.model()->rowCount(), 1);
    QVERIFY(v.model()->index(0, 0).data().toString().contains("leak_calloc"));
    QCOMPARE(v.totalsText(), totals);
    v.filter()->clear();
    QCOMPARE(v.model()->rowCount(), all);
  }

  void showsTheSourceLineOfTheSelectedSite() {
    gui::LeaksView v;
    QSignalSpy ready(&v, &gui::SessionView::ready);
    v.setSession(session_);
    QVERIFY(!v.isReady());
    const Summary& s = session_->whole().summary;
    v.setRange(s.first_event_ns, s.last_event_ns,
               std::shared_ptr<const Analysis>(session_, &session_->whole()));
    QCOMPARE(ready.count(), 1);
    QVERIFY(v.totalsText().contains("8.59 KiB in 13 blocks"));
    // The realloc chain's last block: leaks.cpp's `p = std::realloc(p, 5000);`.
    const Frame* f = v.model()->frame(v.tree()->currentIndex());
    QVERIFY(f && f->function.find("leak_realloc_chain") != std::string::npos);
    QVERIFY2(v.source()->hasSource(), qPrintable(v.source()->toPlainText().left(200)));
    QCOMPARE(v.source()->highlightedLine(), static_cast<int>(f->line));
    const QString line = v.source()->document()->findBlockByNumber(f->line - 1).text();
    QVERIFY2(line.contains("std::realloc(p, 5000)"), qPrintable(line));
  }

  void saysWhenTheSourceIsMissing() {
    gui::SourcePane pane;
    pane.showSource("./libio/no-such-file.c", 12);
    QVERIFY(!pane.hasSource());
    QCOMPARE(pane.toPlainText(), QString("source not found: ./libio/no-such-file.c"));
    QCOMPARE(gui::resolveSource("./libio/no-such-file.c", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
             QString("./libio/no-such-file.c"));
  }
};

QTEST_MAIN(LeaksViewTest)
#include "leaks_view_test.moc"
