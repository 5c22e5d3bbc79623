// MainWindow end to end with its real views: loading samples/leaks traced at
// test time, bad files (missing, a text file, a cut trace) giving the one-line
// reader error, cancelling the load of a large trace, the range every view
// follows, run directories, recent files and dropping a file.
#include <QtTest>
#include <filesystem>

#include "format.hpp"
#include "gui_traces.hpp"
#include "leaks_model.hpp"
#include "leaks_view.hpp"
#include "load_status.hpp"
#include "main_window.hpp"
#include "summary_view.hpp"
#include "views.hpp"

using namespace memtrail;
using gui::MainWindow;

namespace {

int leakRows(MainWindow& w) {
  return static_cast<gui::LeaksView*>(w.view("leaks"))->model()->rowCount();
}

// Loads `path` and waits for the outcome; true when loaded.
bool load(MainWindow& w, const QString& path) {
  QSignalSpy loaded(&w, &MainWindow::loaded), failed(&w, &MainWindow::loadFailed);
  w.openPath(path);
  for (int waited = 0; loaded.count() + failed.count() == 0 && waited < 30000; waited += 20)
    QTest::qWait(20);
  return loaded.count() == 1;
}

}  // namespace

class MainWindowTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // recent files out of the user's settings
    QVERIFY2(!test::leaksTrace().empty(), "memtrail run of samples/leaks failed");
  }
  void cleanupTestCase() { QSettings().clear(); }

  void loadsAndEveryViewGetsReady() {
    test::TestWindow w(test::Recent::remember);
    QSignalSpy all(&w, &MainWindow::allReady);
    QVERIFY(load(w, QString::fromStdString(test::leaksTrace())));
    QVERIFY(all.count() == 1 || all.wait(10000));
    QVERIFY(w.allViewsReady());
    QVERIFY(w.statusText().contains(QString::fromStdString(test::leaksTrace())));
    QVERIFY(w.statusText().contains("whole trace"));
    QVERIFY(leakRows(w) > 0);
    QVERIFY(w.recentFiles().contains(
        QFileInfo(QString::fromStdString(test::leaksTrace())).absoluteFilePath()));
    QVERIFY(w.lastError().isEmpty());
  }

  void badFilesShowTheReadersErrorInOneLine_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("missing") << QString::fromStdString(test::guiTempDir() / "no-such.mtr")
                             << "no-such.mtr";
    QTest::newRow("text") << QString::fromStdString(test::writeFile("notes.mtr", "just text\n"))
                          << "";
    std::string bytes = test::slurp(test::leaksTrace());
    QTest::newRow("cut") << QString::fromStdString(
                                test::writeFile("cut.mtr", bytes.substr(0, bytes.size() / 2)))
                         << "";
  }
  void badFilesShowTheReadersErrorInOneLine() {
    QFETCH(QString, path);
    QFETCH(QString, mentions);
    test::TestWindow w;
    QSignalSpy failed(&w, &MainWindow::loadFailed);
    QVERIFY(!load(w, path));
    QCOMPARE(failed.count(), 1);
    const QString message = failed.front().front().toString();
    QVERIFY(!message.isEmpty());
    QVERIFY2(!message.contains('\n'), qPrintable(message));
    QVERIFY2(message.contains(mentions), qPrintable(message));
    QCOMPARE(w.lastError(), message);
    QVERIFY(w.errorDialog() && w.errorDialog()->isVisible());
    QCOMPARE(w.errorDialog()->text(), message);
    QVERIFY(!w.session());
    QCOMPARE(leakRows(w), 0);
    // Still usable: a good file loads next.
    w.errorDialog()->close();
    QVERIFY(load(w, QString::fromStdString(test::leaksTrace())));
    QVERIFY(w.lastError().isEmpty());
  }

  void cancelDuringLoadLeavesAnEmptyUsableWindow() {
    const std::string big = test::synthesizedTrace("big.mtr", 12'000'000);
    test::TestWindow w;
    QSignalSpy cancelled(&w, &MainWindow::loadCancelled), loaded(&w, &MainWindow::loaded);
    w.openPath(QString::fromStdString(big));
    QVERIFY(w.isLoading());
    // Cancel once the pass over the events is under way.
    QTRY_VERIFY_WITH_TIMEOUT(w.loadStatus()->progressPerMille() > 0 || loaded.count(), 30000);
    QVERIFY2(loaded.count() == 0, "the large trace loaded before it could be cancelled");
    QVERIFY(w.loadStatus()->isVisible() || w.loadStatus()->isVisibleTo(&w));
    QVERIFY(!w.loadStatus()->stageText().isEmpty());
    w.cancelLoad();
    QCOMPARE(cancelled.count(), 1);
    QVERIFY(!w.isLoading());
    QVERIFY(!w.session());
    QVERIFY(w.statusText().contains("cancelled"));
    QTest::qWait(200);
    QCOMPARE(loaded.count(), 0);  // the cancelled load never lands
    QCOMPARE(leakRows(w), 0);
    QVERIFY(load(w, QString::fromStdString(test::leaksTrace())));
    QVERIFY(leakRows(w) > 0);
    std::filesystem::remove(big);
  }

  void rangeFiltersEveryViewAndWholeTraceResets() {
    test::TestWindow w;
    QVERIFY(load(w, QString::fromStdString(test::leaksTrace())));
    const int whole_rows = leakRows(w);
    const Summary& s = w.session()->whole().summary;
    QSignalSpy applied(&w, &MainWindow::rangeApplied);
    emit w.view("leaks")->rangeSelected(s.peak_time_ns + 1, s.last_event_ns);
    QVERIFY(applied.wait(20000));
    QCOMPARE(w.rangeFrom(), s.peak_time_ns + 1);
    QVERIFY(leakRows(w) < whole_rows);
    auto* summary = static_cast<gui::SummaryView*>(w.view("summary"));
    QVERIFY(summary->value("leaked-direct") != gui::bytesAndBlocks(8797, 13));
    QVERIFY(!w.statusText().contains("whole trace"));
    w.resetRange();
    QCOMPARE(leakRows(w), whole_rows);
    QVERIFY(w.statusText().contains("whole trace"));
  }

  void runDirectoryOpensItsFirstProcess() {
    test::TestWindow w;
    const QString run = QFileInfo(QString::fromStdString(test::leaksTrace())).path();
    QVERIFY(load(w, run));
    QVERIFY(w.run().has_value());
    QCOMPARE(w.run()->processes.size(), std::size_t{1});
    QCOMPARE(QString::fromStdString(w.session()->path()),
             QString::fromStdString(test::leaksTrace()));
    auto* summary = static_cast<gui::SummaryView*>(w.view("summary"));
    QVERIFY2(summary->value("processes").startsWith("1 in the run"),
             qPrintable(summary->value("processes")));
  }

  // sh starting the leaks sample: two processes; sh (started first) opens,
  // File → Process of the Run loads the other.
  void runOfTwoProcessesOpensTheFirstAndSwitches() {
    const std::string run = test::recordRun(
        "sh -c " + test::shell_quote(std::string(MEMTRAIL_LEAKS_BIN) + "; true"), "two");
    QVERIFY(!run.empty());
    test::TestWindow w;
    QVERIFY(load(w, QString::fromStdString(run)));
    QCOMPARE(w.run()->processes.size(), std::size_t{2});
    QCOMPARE(w.session()->path(), w.run()->processes[0].file);
    QCOMPARE(w.run()->processes[0].program, std::string("sh"));
    auto* summary = static_cast<gui::SummaryView*>(w.view("summary"));
    QVERIFY2(summary->value("processes").startsWith("2 in the run"),
             qPrintable(summary->value("processes")));
    QSignalSpy loaded(&w, &MainWindow::loaded);
    QVERIFY(w.openProcess(1));
    QVERIFY(loaded.wait(30000));
    QCOMPARE(w.session()->path(), w.run()->processes[1].file);
    QCOMPARE(w.run()->processes.size(), std::size_t{2});  // still the run
    QVERIFY(summary->value("leaked-direct") == gui::bytesAndBlocks(8797, 13));
    QVERIFY(!w.openProcess(2));
  }

  void droppingAFileOpensIt() {
    test::TestWindow w;
    QSignalSpy loaded(&w, &MainWindow::loaded);
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(QString::fromStdString(test::leaksTrace()))});
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&w, &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&w, &drop);
    QVERIFY(loaded.wait(30000));
  }
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
