// memtrail-gui --screenshot run as a program: exit codes, the PNG's size,
// one-line errors (no dialog, no display needed), and the command line.
#include <QImage>
#include <QLabel>
#include <QVBoxLayout>
#include <QtTest>

#include "gui_args.hpp"
#include "gui_traces.hpp"
#include "screenshot.hpp"

using namespace memtrail;
using test::run_command;
using test::shell_quote;

namespace {

test::CommandResult runGui(const std::string& args) {
  // No display: --screenshot must pick the offscreen platform itself.
  return run_command("env -u QT_QPA_PLATFORM -u DISPLAY -u WAYLAND_DISPLAY " MEMTRAIL_GUI_BIN " " +
                     args);
}

}  // namespace

class ScreenshotTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY2(!test::leaksTrace().empty(), "memtrail run of samples/leaks failed");
  }

  void writesAPngOfTheAskedSize_data() {
    QTest::addColumn<QString>("view");
    QTest::addColumn<QString>("extra");
    QTest::newRow("summary") << "summary"
                             << "";
    QTest::newRow("leaks") << "leaks"
                           << "";
    QTest::newRow("leaks, ranged") << "leaks"
                                   << "--range 1ms:";
  }
  void writesAPngOfTheAskedSize() {
    QFETCH(QString, view);
    QFETCH(QString, extra);
    const std::string png = test::guiTempDir() / ("shot-" + view.toStdString() + ".png");
    auto r = runGui(shell_quote(test::leaksTrace()) + " --screenshot " + shell_quote(png) +
                    " --view " + view.toStdString() + " --size 900x700 " + extra.toStdString());
    QVERIFY2(r.exit_code == 0, r.err.c_str());
    QImage image(QString::fromStdString(png));
    QVERIFY(!image.isNull());
    QCOMPARE(image.size(), QSize(900, 700));
    std::remove(png.c_str());
  }

  void badViewBadFileBadArgumentsExit2WithOneLine_data() {
    QTest::addColumn<QString>("args");
    QTest::addColumn<QString>("mentions");
    const QString trace = QString::fromStdString(shell_quote(test::leaksTrace()));
    const QString out = QString::fromStdString(shell_quote(test::guiTempDir() / "x.png"));
    QTest::newRow("unknown view") << trace + " --screenshot " + out + " --view nope"
                                  << "nope";
    QTest::newRow("missing file") << "/nonexistent/t.mtr --screenshot " + out + " --view summary"
                                  << "t.mtr";
    QTest::newRow("text file") << QString::fromStdString(
                                      shell_quote(test::writeFile("text.mtr", "hello\n"))) +
                                      " --screenshot " + out + " --view summary"
                               << "";
    QTest::newRow("no view") << trace + " --screenshot " + out << "--view";
    QTest::newRow("bad size") << trace + " --screenshot " + out + " --view summary --size 12"
                              << "--size";
    QTest::newRow("bad range") << trace + " --screenshot " + out + " --view summary --range 5x:"
                               << "--range";
    QTest::newRow("bad moment") << trace + " --screenshot " + out + " --view summary --moment 3q"
                                << "--moment";
    QTest::newRow("unwritable") << trace + " --screenshot /nonexistent/dir/x.png --view summary"
                                << "/nonexistent/dir/x.png";
  }
  void badViewBadFileBadArgumentsExit2WithOneLine() {
    QFETCH(QString, args);
    QFETCH(QString, mentions);
    auto r = runGui(args.toStdString());
    QCOMPARE(r.exit_code, 2);
    QVERIFY2(r.err_lines() == 1, r.err.c_str());
    QVERIFY2(QString::fromStdString(r.err).startsWith("memtrail-gui: "), r.err.c_str());
    QVERIFY2(QString::fromStdString(r.err).contains(mentions), r.err.c_str());
    QVERIFY(!QFileInfo::exists(QString::fromStdString(test::guiTempDir() / "x.png")));
  }

  void parsesTheCommandLine() {
    std::string error;
    auto a = gui::parse_gui_args(
        {"t.mtr", "--view", "leaks", "--size", "800x600", "--range", "1.5ms:2s"}, &error);
    QVERIFY(a);
    QCOMPARE(a->trace, std::string("t.mtr"));
    QCOMPARE(a->width, 800);
    QCOMPARE(a->height, 600);
    QCOMPARE(*a->range_from, std::uint64_t{1500000});
    QCOMPARE(*a->range_to, std::uint64_t{2000000000});
    a = gui::parse_gui_args({"--range", ":250us"}, &error);
    QVERIFY(a && !a->range_from && *a->range_to == 250000u);
    a = gui::parse_gui_args({"--moment", "14.002ms"}, &error);
    QVERIFY(a && a->moment && *a->moment == 14002000u);
    QVERIFY(!gui::parse_gui_args({"--range", "2s:1s"}, &error));
    QVERIFY(error.find("before") != std::string::npos);
    QVERIFY(!gui::parse_gui_args({"a.mtr", "b.mtr"}, &error));
    QVERIFY(!gui::parse_gui_args({"--bogus"}, &error));
    QCOMPARE(error, std::string("unknown option '--bogus'"));
    QVERIFY(!gui::parse_gui_args({"--screenshot", "x.png", "--view", "summary"}, &error));
    QCOMPARE(error, std::string("--screenshot needs a TRACE"));
  }

  // Item 6 (text clipped): a word-wrapped label whose text grew just before
  // the grab kept its old height in the PNG, its text cut at top and bottom
  // (the OOM explainer's headline in --screenshot --view fragmentation).
  void aLabelThatGrewIsGrabbedWhole() {
    QWidget w;
    auto* layout = new QVBoxLayout(&w);
    auto* label = new QLabel("one line");
    label->setWordWrap(true);
    layout->addWidget(label);
    layout->addWidget(new QWidget, 1);
    w.resize(300, 400);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QTest::qWait(20);
    const int before = label->height();
    label->setText(QString("a headline long enough to wrap ").repeated(6));
    QVERIFY(label->heightForWidth(label->width()) > before);
    // A plain grab still sees the old height: the layout runs later.
    QVERIFY(!w.grab().isNull());
    QCOMPARE(label->height(), before);
    QVERIFY(!gui::grabSettled(w).isNull());
    QVERIFY2(label->height() >= label->heightForWidth(label->width()),
             qPrintable(QString("%1 px for %2 px of text")
                            .arg(label->height())
                            .arg(label->heightForWidth(label->width()))));
  }
};

QTEST_MAIN(ScreenshotTest)
#include "screenshot_test.moc"
