// memtrail-gui driven in a real X window by xdotool (tests/gui/xdotool_drive.sh):
// under Xvfb it opens samples/leaks, switches tabs with Ctrl+Tab (each tab
// paints: MEMTRAIL_GUI_TIMING's marks), zooms the timeline with the wheel,
// selects a range by right-dragging, types a search into the flame graph,
// shows the Sites over time and Histograms tabs, then the Scopes and What-if tabs, and quits with
// Ctrl+Q; each step must change the screen (ImageMagick's import and compare). Skipped when
// xvfb-run, xdotool or ImageMagick is missing (scripts/install-deps installs them).
#include <QDir>
#include <QtTest>

#include "gui_traces.hpp"

using namespace memtrail;

class XdotoolWindowTest : public QObject {
  Q_OBJECT

 private slots:
  void driveTabsZoomRangeSearch() {
    QVERIFY2(!test::leaksTrace().empty(), "memtrail run of samples/leaks failed");
    const std::string out = test::guiTempDir() / "xdotool";
    auto r =
        test::run_command("SEARCH_TEXT=main bash " MEMTRAIL_XDOTOOL_DRIVE " " MEMTRAIL_GUI_BIN " " +
                          test::shell_quote(test::leaksTrace()) + " " + test::shell_quote(out));
    if (r.exit_code == 77) QSKIP(r.out.c_str());
    QVERIFY2(r.exit_code == 0, (r.out + r.err).c_str());
    qInfo("%s", r.out.c_str());
    for (const char* step : {"timeline", "leaks", "tree", "zoom", "range", "flame", "search",
                             "callee", "sites", "histogram", "scopes", "whatif"})
      QVERIFY2(r.out.find(std::string("step ") + step + ": ") != std::string::npos, step);
    const QStringList shots =
        QDir(QString::fromStdString(out)).entryList({"*.png"}, QDir::Files, QDir::Name);
    QCOMPARE(shots.size(), 14);
  }
};

QTEST_MAIN(XdotoolWindowTest)
#include "xdotool_window_test.moc"
