// memtrail-gui in a real X window (xcb under Xvfb), not only offscreen: it
// opens samples/leaks, every view gets ready, the visible one paints, and
// MEMTRAIL_GUI_TIMING=exit ends it. Skipped when xvfb-run is missing.
#include <QtTest>

#include "gui_traces.hpp"

using namespace memtrail;

class XvfbWindowTest : public QObject {
  Q_OBJECT

 private slots:
  void realWindowUnderXvfb_data() {
    QTest::addColumn<QString>("view");
    QTest::newRow("summary") << "summary";
    QTest::newRow("leaks") << "leaks";
  }
  void realWindowUnderXvfb() {
    if (test::run_command("command -v xvfb-run").exit_code != 0)
      QSKIP("xvfb-run not installed (Debian: xvfb): no real X window test");
    QVERIFY2(!test::leaksTrace().empty(), "memtrail run of samples/leaks failed");
    QFETCH(QString, view);
    auto r = test::run_command(
        "QT_QPA_PLATFORM=xcb MEMTRAIL_GUI_TIMING=exit timeout 120 xvfb-run -a -s '-screen 0 "
        "1600x1000x24' " MEMTRAIL_GUI_BIN " " +
        test::shell_quote(test::leaksTrace()) + " --view " + view.toStdString());
    QVERIFY2(r.exit_code == 0, r.err.c_str());
    for (QString event : {"window-shown", "loaded", "summary-ready", "leaks-ready", "all-ready"})
      QVERIFY2(QString::fromStdString(r.err).contains("memtrail-gui: timing " + event + " "),
               r.err.c_str());
    QVERIFY2(QString::fromStdString(r.err).contains("timing " + view + "-painted "), r.err.c_str());
  }
};

QTEST_MAIN(XvfbWindowTest)
#include "xvfb_window_test.moc"
