// TraceWriter's descriptor when the program takes it over (a daemon closing
// every descriptor, then opening its own files at the same numbers): the
// writer never writes into the program's file nor closes it; it reopens the
// trace by path, or stops with an error naming the problem.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <stdexcept>

#include "trace_collector.hpp"

namespace memtrail {
namespace {

using test::Collected;
using test::TempFile;

Event heap_event(std::uint64_t address) {
  Event e;
  e.kind = EventKind::alloc;
  e.pool = 1;
  e.thread = 1;
  e.address = address;
  e.size = e.requested = 64;
  return e;
}

// Puts the program's file `other` at the writer's number, as open() would
// after the program closed it.
void take_over(const TraceWriter& w, const std::string& other) {
  int fd = ::open(other.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::dup2(fd, w.descriptor()), w.descriptor());
  ::close(fd);
}

TEST(WriterDescriptor, SitsHighAndCloseOnExec) {
  TempFile trace("high.mtr");
  TraceWriter w(trace.path, TraceHeader{});
  EXPECT_GE(w.descriptor(), 64);
  EXPECT_TRUE(::fcntl(w.descriptor(), F_GETFD) & FD_CLOEXEC);
}

TEST(WriterDescriptor, TakenOverNumberIsLeftAloneAndTheTraceReopened) {
  TempFile trace("reopen.mtr"), other("reopen-other.txt");
  int number = -1;
  {
    TraceWriter w(trace.path, TraceHeader{});
    w.add_pool(PoolInfo{1, 0, "malloc", PoolKind::heap, MemorySpace::host, -1});
    w.add_thread(ThreadInfo{1, 1, "main"});
    w.add_event(heap_event(0x1000));
    w.flush();
    number = w.descriptor();
    take_over(w, other.path);
    w.add_event(heap_event(0x2000));
    w.finish();
  }
  // The program's file: empty, and still open at its number.
  EXPECT_EQ(::lseek(number, 0, SEEK_END), 0);
  EXPECT_EQ(::close(number), 0);
  Collected c;
  ReadResult r = test::read_trace(trace.path, c);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.complete) << r.chunks << " chunks; " << r.warning;
  ASSERT_EQ(c.events.size(), 2u);
  EXPECT_EQ(c.events[1].address, 0x2000u);
}

TEST(WriterDescriptor, ReplacedTraceFileStopsWritingWithAnError) {
  TempFile trace("replaced.mtr"), other("replaced-other.txt");
  TraceWriter w(trace.path, TraceHeader{});
  int number = w.descriptor();
  take_over(w, other.path);
  ::unlink(trace.path.c_str());  // another file by the same name: not ours
  int fresh = ::open(trace.path.c_str(), O_WRONLY | O_CREAT, 0644);
  ::close(fresh);
  w.add_event(heap_event(0x1000));
  try {
    w.flush();
    ADD_FAILURE() << "flush wrote somewhere";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("closed the trace file's descriptor"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(::lseek(number, 0, SEEK_END), 0);
  EXPECT_EQ(::close(number), 0);
}

}  // namespace
}  // namespace memtrail
