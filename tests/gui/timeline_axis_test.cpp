// The timeline's axes: tick steps of 1, 2 or 5 x 10^n in the unit that reads
// best, labels in binary byte units and in time units of the step.
#include <QtTest>

#include "timeline_axis.hpp"

using namespace memtrail::gui;

class TimelineAxisTest : public QObject {
  Q_OBJECT

 private slots:
  void niceSteps() {
    QCOMPARE(nice_step(0.7), 1.0);
    QCOMPARE(nice_step(1.0), 1.0);
    QCOMPARE(nice_step(1.01), 2.0);
    QCOMPARE(nice_step(3.0), 5.0);
    QCOMPARE(nice_step(7.0), 10.0);
    QCOMPARE(nice_step(2300.0), 5000.0);
  }

  void byteTicksUseBinaryUnits() {
    // 700 MiB in at most 5 ticks: a 200 MiB step.
    const auto ticks = byte_ticks(700ull << 20, 5);
    QCOMPARE(ticks.size(), 4u);
    QCOMPARE(ticks[0].value, 0u);
    QCOMPARE(ticks[0].label, QString("0 MiB"));
    QCOMPARE(ticks[1].value, 200ull << 20);
    QCOMPARE(ticks[1].label, QString("200 MiB"));
    QCOMPARE(ticks[3].label, QString("600 MiB"));
    // 1.5 KiB in 4 ticks: 0.5 KiB steps, one decimal.
    const auto small = byte_ticks(1536, 4);
    QCOMPARE(small.size(), 4u);
    QCOMPARE(small[1].value, 512u);
    QCOMPARE(small[1].label, QString("0.5 KiB"));
    QCOMPARE(small[3].label, QString("1.5 KiB"));
    // Below 1 KiB: whole bytes only.
    const auto bytes = byte_ticks(3, 10);
    QCOMPARE(bytes.size(), 4u);
    QCOMPARE(bytes[3].label, QString("3 B"));
    QVERIFY(byte_ticks(0, 5).empty());
  }

  void timeTicksStartAtAMultipleOfTheStep() {
    // 1.23 s .. 3.9 s, at most 6 ticks: 0.5 s steps from 1.5 s.
    const auto ticks = time_ticks(1'230'000'000, 3'900'000'000, 6);
    QCOMPARE(ticks.size(), 5u);
    QCOMPARE(ticks[0].value, 1'500'000'000u);
    QCOMPARE(ticks[0].label, QString("1.5 s"));
    QCOMPARE(ticks[1].label, QString("2 s"));
    QCOMPARE(ticks[4].value, 3'500'000'000u);
    // A 20 µs window: 5 µs steps, labelled in µs.
    const auto micro = time_ticks(100'000, 120'000, 4);
    QCOMPARE(micro.size(), 5u);
    QCOMPARE(micro[0].label, QString("100 µs"));
    QCOMPARE(micro[1].label, QString("105 µs"));
    QVERIFY(time_ticks(5, 5, 4).empty());
  }

  void labelsForTooltips() {
    QCOMPARE(format_bytes(512), QString("512 B"));
    QCOMPARE(format_bytes(1536), QString("1.5 KiB"));
    QCOMPARE(format_bytes(1258291), QString("1.2 MiB"));
    QCOMPARE(format_bytes(18ull << 20), QString("18 MiB"));
    QCOMPARE(format_time(800), QString("800 ns"));
    QCOMPARE(format_time(12'345), QString("12.3 µs"));
    QCOMPARE(format_time(1'250'000'000), QString("1.25 s"));
    QCOMPARE(format_moment(14'021'000), QString("14.021 ms"));
    QCOMPARE(format_moment(14'000'000), QString("14 ms"));
    QCOMPARE(format_moment(1'250'031'000), QString("1.250031 s"));
  }
};

QTEST_GUILESS_MAIN(TimelineAxisTest)
#include "timeline_axis_test.moc"
