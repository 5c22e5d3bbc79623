// Session::open's time span when events are out of order across threads:
// each thread's buffer is written whole, so the file's first event need not
// be its earliest nor its last event its latest. The span (and with it every
// series the GUI draws) must run from the least to the most event time,
// the summary's first_event_ns to last_event_ns.
#include <QtTest>

#include "gui_traces.hpp"

using namespace memtrail;

namespace {

Event eventAt(std::uint64_t time_ns, std::uint32_t thread, EventKind kind, std::uint64_t address,
              std::uint64_t size) {
  Event e;
  e.time_ns = time_ns;
  e.thread = thread;
  e.pool = 1;
  e.stack = kind == EventKind::free ? 0 : 1;
  e.kind = kind;
  e.address = address;
  e.size = e.requested = size;
  return e;
}

// File order: 1000 (thread 1), 500 (thread 2, the earliest), 3000 (thread
// 1, the latest), 2000 (thread 2's free, the last in the file).
std::string outOfOrderTrace() {
  const std::string path = test::guiTempDir() / "out-of-order.mtr";
  TraceHeader h;
  h.command_line = "gui test out of order";
  TraceWriter w(path, h);
  w.add_thread({1, 1, "t1"});
  w.add_thread({2, 2, "t2"});
  w.add_pool({1, 0, "malloc", PoolKind::heap, MemorySpace::host, -1});
  w.add_stack_node({1, 0, 0x401000});
  w.add_event(eventAt(1000, 1, EventKind::alloc, 0x10000, 100));
  w.add_event(eventAt(500, 2, EventKind::alloc, 0x20000, 200));
  w.add_event(eventAt(3000, 1, EventKind::alloc, 0x30000, 400));
  w.add_event(eventAt(2000, 2, EventKind::free, 0x20000, 0));
  w.finish();
  return path;
}

}  // namespace

class SessionSpanTest : public QObject {
  Q_OBJECT

 private slots:
  void spanIsFromTheLeastToTheMostEventTime() {
    OpenResult opened = Session::open(outOfOrderTrace());
    QVERIFY2(opened.session, opened.message.c_str());
    const Summary& s = opened.session->whole().summary;
    QCOMPARE(s.first_event_ns, std::uint64_t{500});
    QCOMPARE(s.last_event_ns, std::uint64_t{3000});
    // The GUI asks for the whole trace: the series must cover all of it.
    const Envelope e = opened.session->series({SeriesKind::pool_used, PoolId{1}}, s.first_event_ns,
                                              s.last_event_ns, 4);
    QCOMPARE(e.t0, std::uint64_t{500});
    QCOMPARE(e.t1, std::uint64_t{3000});
    QVERIFY(!e.has_data.empty());
    QVERIFY(e.has_data.back());
  }
};

QTEST_MAIN(SessionSpanTest)
#include "session_span_test.moc"
