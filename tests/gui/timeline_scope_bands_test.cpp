// The timeline's scope bands on an in-process trace of a loop: scope "step"
// entered kSteps times on the main thread, then twice on a second thread.
// Every entry carries its number in the trace (1, 2, ... over all threads);
// a band is tall enough to read, and a wide band names its scope and entry,
// a narrow one its entry only.
#include <QtTest>
#include <chrono>
#include <thread>

#include "timeline_painter.hpp"
#include "timeline_view.hpp"
#include "view_traces.hpp"

using namespace memtrail;
using namespace memtrail::gui;

namespace {

constexpr int kSteps = 4;
constexpr int kOtherThreadSteps = 2;
const char* const kStep = "step";

void one_step(std::uint32_t scope) {
  record_scope_begin(scope);
  void* p = std::malloc(4096);
  std::this_thread::sleep_for(std::chrono::milliseconds(3));
  std::free(p);
  record_scope_end(scope);
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

std::string record_loop_trace(const test::TempDir& dir) {
  const std::string path = dir / "loop.mtr";
  RecorderOptions options;
  options.output = path;
  options.sample_interval_ms = 0;
  if (!memtrail::start(options)) return path;
  const std::uint32_t scope = register_scope(kStep, ScopeKind::iteration, 0);
  for (int i = 0; i < kSteps; ++i) one_step(scope);
  std::thread([&] {
    for (int i = 0; i < kOtherThreadSteps; ++i) one_step(scope);
  }).join();
  memtrail::stop();
  return path;
}

}  // namespace

class TimelineScopeBandsTest : public QObject {
  Q_OBJECT

  test::TempDir dir_{"gui-scope-bands"};
  std::shared_ptr<const Session> loop_;

 private slots:
  void initTestCase() {
    QVERIFY(!dir_.path().empty());
    loop_ = test::open_session(record_loop_trace(dir_));
    QVERIFY(loop_);
  }

  void entriesAreNumberedInTraceOrder() {
    const auto all = loop_->scope_intervals(0, kTimeMax, 1000);
    QCOMPARE(all.size(), std::size_t{kSteps + kOtherThreadSteps});
    for (std::size_t i = 0; i < all.size(); ++i) QCOMPARE(all[i].entry, i + 1);
    QCOMPARE(all.back().thread == all.front().thread, false);
    // The numbers count what the report counts.
    std::uint64_t entries = 0;
    for (const ScopeStats& st : loop_->whole().scopes)
      if (st.info.name == kStep) entries = st.entries;
    QCOMPARE(all.back().entry, entries);
  }

  // Zoomed so that entry 2 spans half the plot, whatever the loop's sleeps
  // took on a loaded machine.
  void aWideBandIsTallAndNamesItsScopeAndEntry() {
    TimelineView v;
    v.resize(1000, 600);
    v.setSession(loop_);
    const ScopeInterval second = loop_->scope_intervals(0, kTimeMax, 1000).at(1);
    const std::uint64_t d = second.end_ns - second.begin_ns;
    v.setVisibleRange(second.begin_ns - d / 2, second.end_ns + d / 2);
    const std::size_t i = bandOfEntry(v.frame(), 2);
    QVERIFY(i < v.frame().scopes.size());
    QCOMPARE(v.scopeLabel(i), QStringLiteral("step #2"));
    // The pixels: at least 10 rows of the band's colour at its middle, and
    // some of another colour (the label) inside it.
    const QImage img = v.grab().toImage();
    const int x0 = static_cast<int>(std::ceil(v.xAtTime(second.begin_ns))) + 2;
    const int x1 = static_cast<int>(std::floor(v.xAtTime(second.end_ns))) - 2;
    QVERIFY2(x1 - x0 > 200, qPrintable(QStringLiteral("band %1 px").arg(x1 - x0)));
    const QColor band = pool_color(second.scope + 3);
    const int top = v.plotLayout().scopes.top();
    int rows = 0;
    for (int y = top; y < top + 16; ++y) rows += img.pixelColor(x1 - 1, y) == band;
    QVERIFY2(rows >= 10, qPrintable(QStringLiteral("%1 rows").arg(rows)));
    int text = 0;
    for (int y = top; y < top + rows; ++y)
      for (int x = x0; x < x1; ++x) text += img.pixelColor(x, y) != band;
    QVERIFY2(text > 20, qPrintable(QStringLiteral("%1 label pixels").arg(text)));
  }

  // The label rule on plots of chosen widths: a label never overflows its
  // band, and a band between the widths of "#1" and "step #1" shows "#1".
  void aNarrowBandShowsItsEntryOrNothing() {
    TimelineView v;
    v.resize(1000, 600);
    v.setSession(loop_);
    const QFontMetrics fm = scope_label_metrics(v.font());
    const TimelineFrame& f = v.frame();
    const std::size_t first = bandOfEntry(f, 1);
    QVERIFY(first < f.scopes.size());
    const double share =
        static_cast<double>(f.scopes[first].end_ns - f.scopes[first].begin_ns) / (f.t1 - f.t0);
    const int target = 5 + (fm.horizontalAdvance(QStringLiteral("#1")) +
                            fm.horizontalAdvance(QStringLiteral("step #1"))) /
                               2;
    for (const int width : {300, 1000, 3000, static_cast<int>(target / share)}) {
      TimelineLayout l = v.plotLayout();
      l.plot.setWidth(width);
      l.scopes.setWidth(width);
      for (std::size_t i = 0; i < f.scopes.size(); ++i) {
        const int room = scope_band_rect(f, l, i).width() - 5;
        const QString label = scope_band_label(f, l, fm, i, loop_->whole());
        QVERIFY2(fm.horizontalAdvance(label) <= room, qPrintable(label));
      }
    }
    TimelineLayout l = v.plotLayout();
    l.plot.setWidth(static_cast<int>(target / share));
    l.scopes.setWidth(l.plot.width());
    const int room = scope_band_rect(f, l, first).width() - 5;
    QVERIFY2(room < fm.horizontalAdvance(QStringLiteral("step #1")),
             qPrintable(QString::number(room)));
    QVERIFY2(room >= fm.horizontalAdvance(QStringLiteral("#1")), qPrintable(QString::number(room)));
    QCOMPARE(scope_band_label(f, l, fm, first, loop_->whole()), QStringLiteral("#1"));
  }

 private:
  static std::size_t bandOfEntry(const TimelineFrame& f, std::uint64_t entry) {
    for (std::size_t i = 0; i < f.scopes.size(); ++i)
      if (f.scopes[i].entry == entry) return i;
    return f.scopes.size();
  }
};

QTEST_MAIN(TimelineScopeBandsTest)
#include "timeline_scope_bands_test.moc"
