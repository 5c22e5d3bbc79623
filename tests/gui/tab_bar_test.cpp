// The main window's tab bar at 1400 px wide (issue 30): every tab is in
// sight, none behind the bar's scroll arrows, with a range chosen (the
// longest moment-and-range text) and the window's moment/range text and its
// "Go to peak used" button in sight too. On samples/leaks traced at test
// time, in a MainWindow with its real views.
#include <QLabel>
#include <QMenuBar>
#include <QSignalSpy>
#include <QTabBar>
#include <QTabWidget>
#include <QToolButton>
#include <QtTest>

#include "gui_traces.hpp"
#include "main_window.hpp"
#include "views.hpp"

using namespace memtrail;
using gui::MainWindow;

namespace {

// `widget`'s rectangle inside `w`'s, both in window coordinates.
bool inWindow(const QWidget& widget, const MainWindow& w) {
  const QRect r(widget.mapTo(&w, QPoint(0, 0)), widget.size());
  return widget.isVisible() && w.rect().contains(r);
}

}  // namespace

class TabBarTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY2(!test::leaksTrace().empty(), "memtrail run of samples/leaks failed");
  }

  void everyTabInSightAt1400() {
    test::TestWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(test::openUntilAllReady(w, QString::fromStdString(test::leaksTrace())));
    const Summary& s = w.session()->whole().summary;
    QSignalSpy applied(&w, &MainWindow::rangeApplied);
    const std::uint64_t span = s.last_event_ns - s.first_event_ns;
    emit w.view("leaks")->rangeSelected(s.first_event_ns + span / 3,
                                        s.first_event_ns + 2 * span / 3);
    QVERIFY(applied.wait(20000));
    QVERIFY2(w.focusText().contains(QString::fromUtf8("–")), qPrintable(w.focusText()));
    QCoreApplication::processEvents();

    auto* tabs = qobject_cast<QTabWidget*>(w.centralWidget());
    QVERIFY(tabs);
    QTabBar* bar = tabs->tabBar();
    QVERIFY(bar->count() >= 12);
    for (int i = 0; i < bar->count(); ++i) {
      tabs->setCurrentIndex(i);  // a scrolled bar would move to show it
      QCoreApplication::processEvents();
      for (int j = 0; j < bar->count(); ++j)
        QVERIFY2(bar->rect().contains(bar->tabRect(j)),
                 qPrintable(QString("with %1 current, tab %2 (%3) at %4..%5 of a %6 px bar")
                                .arg(bar->tabText(i), QString::number(j), bar->tabText(j))
                                .arg(bar->tabRect(j).left())
                                .arg(bar->tabRect(j).right())
                                .arg(bar->width())));
    }
    for (auto* arrow : bar->findChildren<QToolButton*>())
      QVERIFY2(!arrow->isVisible(), "the tab bar shows its scroll arrows");
    QVERIFY(bar->tabText(bar->count() - 1).contains("Processes"));
    QVERIFY(inWindow(*bar, w));

    // The moment and range, and the way back to the peak, stay in sight.
    QLabel* focus = nullptr;
    for (auto* label : w.findChildren<QLabel*>())
      if (label->text() == w.focusText()) focus = label;
    QVERIFY(focus);
    QVERIFY(inWindow(*focus, w));
    QVERIFY(focus->width() >= focus->sizeHint().width());  // not clipped
    QToolButton* peak = nullptr;
    for (auto* b : w.findChildren<QToolButton*>())
      if (b->text().contains("peak used")) peak = b;
    QVERIFY(peak && inWindow(*peak, w));
  }
};

QTEST_MAIN(TabBarTest)
#include "tab_bar_test.moc"
