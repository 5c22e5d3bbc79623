// TraceWriter's Resume: a trace whose writer died (its last chunk cut short,
// no end marker) reopened to append a chunk and the end marker, as
// `memtrail run` does with a process's counted loss (run_tally.cpp).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memtrail/trace_file.hpp"
#include "trace_collector.hpp"

namespace memtrail {
namespace {

Event alloc_at(std::uint64_t i) {
  Event e;
  e.kind = EventKind::alloc;
  e.time_ns = 1000 * (i + 1);
  e.thread = 1;
  e.pool = 1;
  e.address = 0x10000 + 64 * i;
  e.size = e.requested = 44;
  return e;
}

TEST(Resume, AppendsAChunkAndTheEndAfterTheLastWholeChunk) {
  test::TempFile file("resume.mtr");
  TraceHeader header;
  header.time_resolution_ns = 1000;
  std::uint64_t whole_bytes = 0;
  {
    TraceWriter w(file.path, header);
    w.add_thread(ThreadInfo{1, 100, "main"});
    w.add_pool(PoolInfo{1, 0, "malloc", PoolKind::system, MemorySpace::host, -1});
    w.add_string(1, "a string");
    for (std::uint64_t i = 0; i < 100; ++i) w.add_event(alloc_at(i));
    w.flush();
    whole_bytes = w.bytes_written();
    for (std::uint64_t i = 100; i < 200; ++i) w.add_event(alloc_at(i));
    w.flush();
    w.abandon();  // no end marker: the writer "died"
  }
  // The second chunk cut short, as by a kill inside its write.
  struct stat st;
  ASSERT_EQ(::stat(file.path.c_str(), &st), 0);
  ASSERT_EQ(::truncate(file.path.c_str(), st.st_size - 7), 0);
  test::Collected cut;
  ReadResult r = TraceReader(file.path).read(cut);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_FALSE(r.complete);
  ASSERT_EQ(r.events, 100u);
  ASSERT_EQ(static_cast<std::uint64_t>(st.st_size - 7) - r.dropped_bytes, whole_bytes);

  {
    TraceWriter::Resume at;
    at.keep_bytes = whole_bytes;
    at.events = r.events;
    at.time_resolution_ns = header.time_resolution_ns;
    TraceWriter w(file.path, at);
    w.add_string(2, "lost words");
    Event mark;
    mark.kind = EventKind::mark;
    mark.detail = static_cast<std::uint8_t>(MarkDetail::lost);
    mark.time_ns = 100'000;
    mark.size = 100;
    mark.requested = static_cast<std::uint8_t>(LostReason::process_ended);
    mark.aux = 2;
    w.add_event(mark);
    w.finish();
  }
  test::Collected whole;
  ReadResult done = TraceReader(file.path).read(whole);
  ASSERT_TRUE(done.ok) << done.error;
  EXPECT_TRUE(done.complete);
  EXPECT_EQ(done.dropped_bytes, 0u);
  EXPECT_EQ(done.events, 101u);
  ASSERT_EQ(whole.events.size(), 101u);
  EXPECT_EQ(whole.events[99].address, alloc_at(99).address);
  EXPECT_EQ(whole.events[100].kind, EventKind::mark);
  EXPECT_EQ(whole.events[100].size, 100u);
  EXPECT_EQ(whole.events[100].requested, static_cast<std::uint64_t>(LostReason::process_ended));
  ASSERT_EQ(whole.strings.size(), 2u);
  EXPECT_EQ(whole.strings[1].second, "lost words");
}

}  // namespace
}  // namespace memtrail
