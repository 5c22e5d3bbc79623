// TraceWriter::on_chunk_written: the count it hands the recorder's event
// tally is the events in the file, never more. memtrail run counts lost =
// made - written after an abrupt end; a count ahead of the file hides that
// many lost events (AbruptEnd.RawExitGroupFromTwoThreadsCountsEveryEvent
// failed so, 5,000 to 19,000 short, under load).
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "format_layout.hpp"
#include "trace_collector.hpp"

namespace memtrail {
namespace {

using test::Collected;
using test::TempFile;

Event alloc_event(std::uint32_t thread, std::uint64_t n) {
  Event e;
  e.kind = EventKind::alloc;
  e.pool = 1;
  e.thread = thread;
  e.time_ns = n;
  e.address = 0x10000 + 64 * n;
  e.size = e.requested = 64;
  return e;
}

std::uint64_t events_in(const std::string& path) {
  Collected c;
  ReadResult r = test::read_trace(path, c);
  EXPECT_TRUE(r.ok) << r.error;
  return c.events.size();
}

// As the recorder counts: `added` events went into the writer (each
// counted once its add returned); the tally gets the count as the writer
// says its chunks are in the file. Each report is checked against the file.
struct Tally {
  explicit Tally(std::string trace) : path(std::move(trace)) {}
  std::string path;
  std::uint64_t added = 0;
  std::vector<std::uint64_t> reported, in_file;
  void watch(TraceWriter& w) {
    w.on_chunk_written(
        [](void* self, std::uint64_t counted) {
          auto* t = static_cast<Tally*>(self);
          t->reported.push_back(counted);
          t->in_file.push_back(events_in(t->path));
        },
        this, &added);
  }
  void add(TraceWriter& w, const Event& e) {
    if (e.thread >= threads_named) {
      w.add_thread(ThreadInfo{e.thread, e.thread, "t"});
      threads_named = e.thread + 1;
    }
    w.add_event(e);
    ++added;
  }
  std::uint32_t threads_named = 1;  // threads 1.. are named as they first appear
};

// A program thread that drains while the writer thread stands aside
// leaves its chunks for the writer to write (drain_sharing.cpp), and goes
// on encoding the next chunk: the count said once the writer writes them
// is theirs, not the one of the events encoded since.
TEST(WriterTally, ChunksWrittenForAnotherThreadCountOnlyTheirEvents) {
  TempFile trace("tally-pending.mtr");
  Tally tally(trace.path);  // outlives the writer, which may call it as it ends
  TraceWriter w(trace.path, TraceHeader{});
  tally.watch(w);
  w.write_only_from_this_thread();
  w.add_pool(PoolInfo{1, 0, "malloc", PoolKind::heap, MemorySpace::host, -1});
  std::thread drainer([&] {
    for (std::uint64_t n = 0; n < 1000; ++n) tally.add(w, alloc_event(1, n));
    w.flush();  // a whole chunk, waiting for the writing thread
    for (std::uint64_t n = 1000; n < 1500; ++n) tally.add(w, alloc_event(1, n));
  });
  drainer.join();
  EXPECT_TRUE(tally.reported.empty());  // nothing is in the file yet
  w.write_pending();
  ASSERT_EQ(tally.reported.size(), 1u);
  EXPECT_EQ(tally.in_file[0], 1000u);
  EXPECT_EQ(tally.reported[0], tally.in_file[0]);
}

// A chunk ends when it is full, and when an event's thread would be one
// too many for it (kMaxThreadsPerChunk): then before that event. Either
// way the count is the file's, to the event.
TEST(WriterTally, EveryChunkCountsExactlyItsEvents) {
  TempFile trace("tally-chunks.mtr");
  Tally tally(trace.path);  // outlives the writer, which may call it as it ends
  TraceWriter w(trace.path, TraceHeader{});
  tally.watch(w);
  w.add_pool(PoolInfo{1, 0, "malloc", PoolKind::heap, MemorySpace::host, -1});
  std::uint64_t n = 0;
  for (std::uint32_t thread = 1; thread <= format::kMaxThreadsPerChunk + 1; ++thread)
    tally.add(w, alloc_event(thread, n++));
  while (tally.reported.size() < 3) tally.add(w, alloc_event(1, n++));  // full chunks
  for (int last = 0; last < 10; ++last) tally.add(w, alloc_event(1, n++));
  w.finish();
  ASSERT_GE(tally.reported.size(), 4u);
  EXPECT_EQ(tally.in_file[0], format::kMaxThreadsPerChunk);
  for (std::size_t i = 0; i < tally.reported.size(); ++i)
    EXPECT_EQ(tally.reported[i], tally.in_file[i]) << "chunk " << i;
  EXPECT_EQ(tally.reported.back(), tally.added);
}

}  // namespace
}  // namespace memtrail
