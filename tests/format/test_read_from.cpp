// TraceReader::read_from() and TraceVisitor::on_chunk(): a read resumed at a
// chunk start delivers exactly the events of the full read from there on.
#include <gtest/gtest.h>

#include "trace_collector.hpp"

namespace memtrail {
namespace {

struct ChunkCollected : test::Collected {
  std::vector<std::uint64_t> chunk_offsets;
  std::vector<std::size_t> events_before;  // events delivered before each chunk
  void on_chunk(std::uint64_t offset) override {
    chunk_offsets.push_back(offset);
    events_before.push_back(events.size());
  }
};

// 5 chunks of 10 allocs each; the pool and stack are defined in the first.
void write_chunks(const std::string& path) {
  TraceWriter w(path, TraceHeader{});
  w.add_thread(ThreadInfo{1, 100, "main"});
  w.add_pool(PoolInfo{1, 0, "malloc", PoolKind::heap, MemorySpace::host, -1});
  w.add_stack_node(StackNode{1, 0, 0x1234});
  for (int c = 0; c < 5; ++c) {
    for (int i = 0; i < 10; ++i) {
      Event e;
      e.time_ns = static_cast<std::uint64_t>(c * 100 + i);
      e.kind = EventKind::alloc;
      e.thread = 1;
      e.pool = 1;
      e.stack = 1;
      e.address = 0x1000 + static_cast<std::uint64_t>(c * 10 + i) * 64;
      e.size = 64;
      w.add_event(e);
    }
    w.flush();
  }
  w.finish();
}

TEST(ReadFrom, ResumesAtEveryChunkStart) {
  test::TempFile f("read-from.mtr");
  write_chunks(f.path);
  ChunkCollected all;
  TraceReader reader(f.path);
  ReadResult r = reader.read(all);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(all.chunk_offsets.size(), 5u);
  EXPECT_EQ(all.events_before, (std::vector<std::size_t>{0, 10, 20, 30, 40}));
  for (std::size_t k = 0; k < all.chunk_offsets.size(); ++k) {
    ChunkCollected part;
    TraceReader again(f.path);
    ReadResult pr = again.read_from(part, all.chunk_offsets[k]);
    ASSERT_TRUE(pr.ok) << pr.error;  // the end marker's count is the whole file's
    EXPECT_TRUE(pr.complete);
    ASSERT_EQ(part.events.size(), 50 - 10 * k);
    for (std::size_t i = 0; i < part.events.size(); ++i)
      EXPECT_EQ(part.events[i].address, all.events[10 * k + i].address);
    EXPECT_EQ(part.chunk_offsets.front(), all.chunk_offsets[k]);
  }
  // The pipelined and read-ahead paths report the same chunk starts.
  ChunkCollected ahead;
  TraceReader third(f.path);
  ASSERT_TRUE(third.read_ahead(ahead).ok);
  EXPECT_EQ(ahead.chunk_offsets, all.chunk_offsets);
  EXPECT_EQ(ahead.events_before, all.events_before);
}

TEST(ReadFrom, AnOffsetThatIsNoChunkIsAnError) {
  test::TempFile f("read-from-bad.mtr");
  write_chunks(f.path);
  ChunkCollected all;
  TraceReader reader(f.path);
  ASSERT_TRUE(reader.read(all).ok);
  test::Collected c;
  EXPECT_EQ(TraceReader(f.path).read_from(c, 3).error, f.path + ": no chunk at byte 3");
  // Inside a chunk: the frame check fails with an error, never a crash.
  ReadResult mid = TraceReader(f.path).read_from(c, all.chunk_offsets[1] + 5);
  EXPECT_FALSE(mid.ok);
  EXPECT_NE(mid.error.find("chunk at byte"), std::string::npos) << mid.error;
}

}  // namespace
}  // namespace memtrail
