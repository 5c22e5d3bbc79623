// Opening a `memtrail run` directory (issue 30): File → Open accepts the
// directory (Qt's dialog used to descend into it, and Open then did
// nothing), and the Processes tab lists the run's processes with the
// figures `memtrail report --json RUN` gives per process (pid, program,
// events, peak, leaked) and the exit status index.tsv recorded; a double
// click on a row opens that process. On `sh -c leaks` traced at test time.
#include <QLineEdit>
#include <QTreeWidget>
#include <QtTest>

#include "format.hpp"
#include "gui_traces.hpp"
#include "main_window.hpp"
#include "processes_view.hpp"
#include "trace_file_dialog.hpp"
#include "views.hpp"

using namespace memtrail;
using gui::MainWindow;
using gui::ProcessesView;

namespace {

const std::string& twoProcessRun() {
  static const std::string run = test::recordRun(
      "sh -c " + test::shell_quote(std::string(MEMTRAIL_LEAKS_BIN) + "; true"), "two");
  return run;
}

QAction* openAction(MainWindow& w) {
  for (QAction* a : w.findChildren<QAction*>())
    if (a->text() == "&Open...") return a;
  return nullptr;
}

// File → Open, then `choose` on the dialog, then Open.
bool openThroughTheDialog(MainWindow& w, const std::function<void(gui::TraceFileDialog&)>& choose) {
  QAction* open = openAction(w);
  if (!open) return false;
  QSignalSpy loaded(&w, &MainWindow::loaded);
  open->trigger();
  auto* dialog = w.findChild<gui::TraceFileDialog*>();
  if (!dialog) return false;
  choose(*dialog);
  dialog->accept();
  return loaded.wait(30000);
}

ProcessesView* processesOf(MainWindow& w) {
  return static_cast<ProcessesView*>(w.view("processes"));
}

}  // namespace

class ProcessesViewTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY2(!twoProcessRun().empty(), "memtrail run of sh -c leaks failed");
  }
  void cleanupTestCase() { QSettings().clear(); }

  // The run directory selected in its parent's listing: Open opens it.
  void fileOpenOpensASelectedRunDirectory() {
    test::TestWindow w;
    const QString run = QString::fromStdString(twoProcessRun());
    QVERIFY(openThroughTheDialog(w, [&](gui::TraceFileDialog& d) {
      d.setDirectory(QFileInfo(run).path());
      d.selectFile(run);
    }));
    QVERIFY(w.run().has_value());
    QCOMPARE(w.run()->processes.size(), std::size_t{2});
    QCOMPARE(w.session()->path(), w.run()->processes[0].file);
  }

  // What File → Open did before (Qt's dialog in ExistingFile mode): Open on
  // a selected directory descends into it and accepts nothing.
  void qtsOwnDialogDescendsIntoTheRunDirectory() {
    QFileDialog d;
    d.setOption(QFileDialog::DontUseNativeDialog);
    d.setFileMode(QFileDialog::ExistingFile);
    const QString run = QString::fromStdString(twoProcessRun());
    d.setDirectory(QFileInfo(run).path());
    d.selectFile(run);
    static_cast<QDialog&>(d).accept();  // QFileDialog::accept, protected there
    QVERIFY(d.result() != QDialog::Accepted);
    QCOMPARE(d.directory().canonicalPath(), QDir(run).canonicalPath());
  }

  // Inside the run directory with no file selected: Open opens the run.
  void fileOpenInsideARunDirectoryOpensIt() {
    test::TestWindow w;
    const QString run = QString::fromStdString(twoProcessRun());
    QVERIFY(openThroughTheDialog(w, [&](gui::TraceFileDialog& d) { d.setDirectory(run); }));
    QVERIFY(w.run().has_value());
    QCOMPARE(QDir(QString::fromStdString(w.run()->directory)).canonicalPath(),
             QDir(run).canonicalPath());
  }

  // A trace file chosen in the dialog still opens as a trace.
  void fileOpenOfATraceOpensIt() {
    test::TestWindow w;
    const QString trace = QString::fromStdString(test::leaksTrace());
    QVERIFY(openThroughTheDialog(w, [&](gui::TraceFileDialog& d) {
      d.setDirectory(QFileInfo(trace).path());
      d.selectFile(trace);
    }));
    QVERIFY(!w.run().has_value());
    QCOMPARE(QString::fromStdString(w.session()->path()), trace);
  }

  // One row per process, with report's per-process figures and the exit
  // status; a double click opens the other process.
  void overviewListsTheProcessesAndOpensOne() {
    test::TestWindow w;
    w.resize(1400, 800);
    w.show();
    QSignalSpy loaded(&w, &MainWindow::loaded);
    w.openPath(QString::fromStdString(twoProcessRun()));
    QVERIFY(loaded.wait(30000));
    ProcessesView* v = processesOf(w);
    QTRY_VERIFY_WITH_TIMEOUT(v->isReady(), 30000);
    QCOMPARE(v->rowCount(), 2);
    // The process the window loads is not analysed a second time beside its
    // Session (that doubled the peak memory): only the other one is.
    QCOMPARE(v->analysesStarted(), std::size_t{1});

    auto r = test::run_command(std::string(MEMTRAIL_BIN) + " report --json " +
                               test::shell_quote(twoProcessRun()));
    QCOMPARE(r.exit_code, 0);
    const nlohmann::json report = nlohmann::json::parse(r.out);
    QCOMPARE(report["processes"].size(), std::size_t{2});
    for (int row = 0; row < 2; ++row) {
      const nlohmann::json& p = report["processes"][row];
      const nlohmann::json& s = p["report"]["summary"];
      auto cell = [&](const char* column) {
        return v->cell(row, ProcessesView::columnIndex(column));
      };
      QCOMPARE(cell("pid"), QString::number(p["pid"].get<std::uint32_t>()));
      QCOMPARE(cell("program"), QString::fromStdString(p["program"]));
      QCOMPARE(cell("events"), gui::countText(s["events"]));
      QCOMPARE(cell("peak"), gui::bytesText(s["peak_used_bytes"]));
      QCOMPARE(cell("leaked"), gui::bytesText(s["leaked_bytes"]));
      QCOMPARE(cell("blocks"), gui::countText(s["leaked_blocks"]));
    }
    // sh is the root: `memtrail run` wrote its exit status (0: `; true`).
    QCOMPARE(v->cell(0, ProcessesView::columnIndex("exit")), QString("0"));
    QCOMPARE(v->cell(1, ProcessesView::columnIndex("exit")), QString("—"));

    QVERIFY(w.showView("processes"));
    auto* table = v->findChild<QTreeWidget*>();
    QVERIFY(table);
    const QRect second = table->visualItemRect(table->topLevelItem(1));
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, second.center());
    QTest::mouseDClick(table->viewport(), Qt::LeftButton, {}, second.center());
    QVERIFY(loaded.wait(30000));
    QCOMPARE(w.session()->path(), w.run()->processes[1].file);
  }

  // The filter keeps the processes whose program holds the text: for a
  // whole program name, those of `report --program NAME`.
  void filterKeepsTheProgramsReportSelects() {
    ProcessesView v;
    std::string error;
    auto run = read_run(twoProcessRun(), &error);
    QVERIFY(run);
    v.setRun(*run);
    QCOMPARE(v.rowCount(), 2);
    for (const char* program : {"leaks", "sh"}) {
      auto r = test::run_command(std::string(MEMTRAIL_BIN) + " report --json --program " + program +
                                 " " + test::shell_quote(twoProcessRun()));
      QCOMPARE(r.exit_code, 0);
      const nlohmann::json report = nlohmann::json::parse(r.out);
      QStringList want, shown;
      // One process: report answers with that process's report alone.
      if (report.contains("processes"))
        for (const auto& p : report["processes"]) want << QString::number(p["pid"].get<int>());
      else
        want << QString::number(report["trace"]["pid"].get<int>());
      v.filter()->setText(QString::fromLatin1(program).toUpper());
      for (int row = 0; row < v.rowCount(); ++row)
        if (!v.rowHidden(row)) shown << v.cell(row, ProcessesView::columnIndex("pid"));
      QCOMPARE(shown, want);
    }
    v.setFilter("no such program");
    QVERIFY(v.rowHidden(0) && v.rowHidden(1));
    v.setFilter({});
    QVERIFY(!v.rowHidden(0) && !v.rowHidden(1));
  }

  // Without a run directory, the tab says how to get one.
  void withoutARunItSaysHowToOpenOne() {
    ProcessesView v;
    QVERIFY(v.isReady());
    QCOMPARE(v.rowCount(), 0);
    QVERIFY2(v.heading().contains("run directory"), qPrintable(v.heading()));
  }
};

QTEST_MAIN(ProcessesViewTest)
#include "processes_view_test.moc"
