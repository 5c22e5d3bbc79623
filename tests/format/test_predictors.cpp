// The encoder's predictors (docs/trace-format.md 3.2): the allocator-model
// address candidates, the alternate-stack code and the time resolution. Each
// is checked on the shared model itself (the writer and reader evolve the
// same state) and end to end through a file, on the hit and the miss path.
#include <gtest/gtest.h>

#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>

#include "format_layout.hpp"
#include "memtrail/trace_file.hpp"
#include "reference_model.hpp"
#include "trace_collector.hpp"

namespace memtrail {
namespace {

using format::chunk_class;
using format::kClassDepth;
using format::kFreshEnds;
using format::reference::AllocCandidates;
using format::reference::ThreadCodecState;
using test::Collected;

TEST(ChunkClass, MatchesGlibcChunkSizes) {
  EXPECT_EQ(chunk_class(0), 32u);
  EXPECT_EQ(chunk_class(24), 32u);
  EXPECT_EQ(chunk_class(25), 48u);
  EXPECT_EQ(chunk_class(1024), 1040u);
  EXPECT_EQ(chunk_class(65536), 65552u);
}

// Decodes `index` and checks it names `address`, as the reader would.
void expect_round_trip(ThreadCodecState& st, std::uint64_t cls, std::uint64_t address,
                       std::uint64_t expected_index) {
  std::uint64_t index = 0, decoded = 0;
  ASSERT_TRUE(AllocCandidates(st, cls).index_of(address, index));
  EXPECT_EQ(index, expected_index);
  ASSERT_TRUE(AllocCandidates(st, cls).address_at(index, decoded));
  EXPECT_EQ(decoded, address);
}

TEST(AllocCandidates, SameClassFreesComeFirstNewestFirst) {
  ThreadCodecState st;
  st.push_freed(0x1000, 40);   // class 48
  st.push_freed(0x2000, 100);  // class 112
  st.push_freed(0x3000, 33);   // class 48
  // Class 48 holds 0x3000 (index 0) then 0x1000 (index 1).
  expect_round_trip(st, chunk_class(40), 0x3000, 0);
  expect_round_trip(st, chunk_class(40), 0x1000, 1);
  // Taking a block removes it from both lists.
  st.take_freed(chunk_class(40), 0x3000);
  expect_round_trip(st, chunk_class(40), 0x1000, 0);
  std::uint64_t index;
  // 0x3000 is live again: no candidate names it any more.
  EXPECT_FALSE(AllocCandidates(st, chunk_class(40)).index_of(0x3000, index));
}

TEST(AllocCandidates, FreshBlocksFollowRecentOnes) {
  ThreadCodecState st;
  st.push_freed(0x1000, 40);
  st.push_fresh(0x9000 + chunk_class(500));
  st.push_fresh(0xa000 + chunk_class(70));
  // One same-class entry, so the ends of recent blocks start at index 1, newest first.
  expect_round_trip(st, chunk_class(40), 0xa000 + chunk_class(70), 1);
  expect_round_trip(st, chunk_class(40), 0x9000 + chunk_class(500), 2);
  // A class with no entries: they start at index 0.
  expect_round_trip(st, chunk_class(4000), 0x9000 + chunk_class(500), 1);
  std::uint64_t address;
  EXPECT_FALSE(AllocCandidates(st, chunk_class(4000)).address_at(2, address));  // no third end
  // The ring keeps the last kFreshEnds ends.
  for (int i = 0; i < kFreshEnds; ++i) st.push_fresh(0x100000 + 0x1000 * i);
  std::uint64_t index;
  EXPECT_FALSE(AllocCandidates(st, chunk_class(4000)).index_of(0x9000 + chunk_class(500), index));
  expect_round_trip(st, chunk_class(4000), 0x100000, kFreshEnds - 1);
}

TEST(AllocCandidates, OtherClassFreesByRecencyAmongLiveOnes) {
  ThreadCodecState st;
  st.push_freed(0xa000, 5000);
  st.push_freed(0xb000, 7000);
  st.push_freed(0xc000, 9000);
  std::uint64_t cls = chunk_class(2000);  // no same-class entries, no block ends
  expect_round_trip(st, cls, 0xc000, kFreshEnds + 0);
  expect_round_trip(st, cls, 0xa000, kFreshEnds + 2);
  st.take_freed(cls, 0xb000);  // taken entries no longer count in the rank
  expect_round_trip(st, cls, 0xa000, kFreshEnds + 1);
  std::uint64_t address;
  EXPECT_FALSE(AllocCandidates(st, cls).address_at(kFreshEnds + 2, address));
  EXPECT_FALSE(AllocCandidates(st, cls).index_of(0xd000, address));  // a miss
}

TEST(AllocCandidates, ClassListKeepsTheNewestEntries) {
  ThreadCodecState st;
  for (int i = 0; i < kClassDepth + 4; ++i) st.push_freed(0x10000 + 0x100 * i, 64);
  std::uint64_t cls = chunk_class(64), index;
  expect_round_trip(st, cls, 0x10000 + 0x100 * (kClassDepth + 3), 0);
  // The oldest same-class entry fell off the class list; it is still a recent free.
  ASSERT_TRUE(AllocCandidates(st, cls).index_of(0x10000, index));
  EXPECT_GE(index, static_cast<std::uint64_t>(kClassDepth + kFreshEnds));
}

TEST(StackCode, AlternatingSitesCodeAsZero) {
  ThreadCodecState st;
  int k = static_cast<int>(EventKind::free);
  st.set_stack(k, 7);
  st.set_stack(k, 9);
  EXPECT_EQ(st.stack_code(k, 7), 0u);  // the one before last
  EXPECT_EQ(st.stack_code(k, 3), 4u);  // id + 1
  std::uint32_t stack;
  ASSERT_TRUE(st.stack_of_code(k, 0, stack));
  EXPECT_EQ(stack, 7u);
  ASSERT_TRUE(st.stack_of_code(k, 4, stack));
  EXPECT_EQ(stack, 3u);
  EXPECT_FALSE(st.stack_of_code(k, 0x100000001ull, stack));  // id beyond 32 bits
}

struct PredictorFile : ::testing::Test {
  std::string path = test::temp_path("predictors.mtr");
  void TearDown() override { std::remove(path.c_str()); }

  // before_event(writer, i) runs before the i-th event is added.
  template <class BeforeEvent>
  Collected write_and_read(const std::vector<Event>& events, std::uint32_t resolution,
                           ReadResult& r, BeforeEvent before_event) {
    {
      TraceHeader h;
      h.time_resolution_ns = resolution;
      TraceWriter w(path, h);
      w.add_thread({1, 1, "a"});
      w.add_thread({2, 2, "b"});
      w.add_pool({1, 0, "malloc", PoolKind::heap, MemorySpace::host, -1});
      for (std::uint32_t s = 1; s <= 3; ++s) w.add_stack_node({s, 0, 0x400u * s});
      for (std::size_t i = 0; i < events.size(); ++i) {
        before_event(w, i);
        w.add_event(events[i]);
      }
      w.finish();
      bytes = w.bytes_written();
    }
    Collected c;
    r = test::read_trace(path, c);
    return c;
  }
  Collected write_and_read(const std::vector<Event>& events, std::uint32_t resolution,
                           ReadResult& r) {
    return write_and_read(events, resolution, r, [](TraceWriter&, std::size_t) {});
  }
  std::uint64_t bytes = 0;  // of the last write_and_read
};

Event alloc(std::uint64_t t, std::uint32_t thread, std::uint32_t stack, std::uint64_t address,
            std::uint64_t size) {
  return Event{t, thread, 1, stack, EventKind::alloc, 1, address, size, size, 0};
}
Event free_of(std::uint64_t t, std::uint32_t thread, std::uint32_t stack, std::uint64_t address,
              std::uint64_t size = 0) {
  return Event{t, thread, 1, stack, EventKind::free, 9, address, size, 0, 0};
}

// glibc-shaped traffic on two threads: carving from the top, same-class
// reuse, reuse of another class's block, a free of an unknown block (no size,
// so no class) and allocs no candidate predicts.
std::vector<Event> allocator_shaped_events() {
  std::vector<Event> v;
  std::uint64_t t = 1'000'003;
  for (std::uint32_t th : {1u, 2u}) {
    std::uint64_t base = 0x5555'0000'0000ull + th * 0x100'0000ull;
    std::uint64_t top = base;
    std::vector<std::uint64_t> blocks;
    for (int i = 0; i < 40; ++i) {  // fresh: each block ends where the next starts
      std::uint64_t size = 24 + 40 * i;
      v.push_back(alloc(t += 137, th, 1 + i % 3, top, size));
      blocks.push_back(top);
      top += chunk_class(size);
    }
    for (int i = 0; i < 40; i += 2) v.push_back(free_of(t += 91, th, 1 + (i / 2) % 2, blocks[i]));
    for (int i = 38; i >= 0; i -= 2)  // same class, newest first
      v.push_back(alloc(t += 55, th, 2, blocks[i], 24 + 40 * i));
    v.push_back(free_of(t += 7, th, 3, blocks[5]));
    v.push_back(alloc(t += 7, th, 3, blocks[5], 10));     // another class's block
    v.push_back(free_of(t += 7, th, 3, 0x7777'0000ull));  // unknown block
    v.push_back(alloc(t += 7, th, 3, 0x7777'0000ull, 5000));
    v.push_back(alloc(t += 7, th, 3, 0x1234'5670ull, 64));  // no candidate: a delta
    v.push_back(alloc(t += 7, th, 3, 0, 0));                // failed alloc
  }
  return v;
}

TEST_F(PredictorFile, AllocatorShapedStreamRoundTripsExactly) {
  std::vector<Event> events = allocator_shaped_events();
  ReadResult r;
  Collected c = write_and_read(events, 1, r);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(c.events.size(), events.size());
  for (std::size_t i = 0; i < events.size(); ++i) EXPECT_EQ(c.events[i], events[i]) << i;
}

// The glibc model is the writer's choice per chunk: without it, and switched
// on and off between chunks (and asked for in the middle of one, which waits
// for the next), the events read back the same; the model is what makes
// this allocator-shaped stream small.
TEST_F(PredictorFile, AddressModelOffOrSwitchedPerChunkRoundTripsExactly) {
  std::vector<Event> events = allocator_shaped_events();
  ReadResult r;
  write_and_read(events, 1, r);
  ASSERT_TRUE(r.ok) << r.error;
  const std::uint64_t with_model = bytes;
  using Before = std::function<void(TraceWriter&, std::size_t)>;
  for (const Before& before : {
           Before([](TraceWriter&w, std::size_t i) {
             if (i == 0) w.set_address_model(false);
           }),
           Before([](TraceWriter&w, std::size_t i) {
             // Chunks of 40 events: odd ones start with the model and drop
             // it halfway, even ones start without and ask for it halfway.
             if (i % 40 == 0) w.flush();
             if (i % 20 == 0) w.set_address_model((i / 40 % 2 == 1) == (i % 40 == 0));
           }),
       }) {
    Collected c = write_and_read(events, 1, r, before);
    ASSERT_TRUE(r.ok) << r.error;
    ASSERT_EQ(c.events.size(), events.size());
    for (std::size_t i = 0; i < events.size(); ++i) EXPECT_EQ(c.events[i], events[i]) << i;
    EXPECT_GT(bytes, with_model);
  }
}

// Taking the model up in the middle of a chunk would be wrong: the reader's
// class list holds a block freed before, the writer's would not, and a
// fresh-end index of the writer would decode as that class entry.
TEST_F(PredictorFile, AddressModelAskedForMidChunkWaitsForTheNextChunk) {
  const std::uint64_t a = 0x7000'0000, b = 0x7100'0000;
  std::vector<Event> events = {
      alloc(10, 1, 1, a, 24), free_of(20, 1, 1, a), alloc(30, 1, 1, b, 100),
      alloc(40, 1, 1, b + chunk_class(100), 24),  // a fresh end, a's class
  };
  ReadResult r;
  Collected c = write_and_read(events, 1, r, [](TraceWriter& w, std::size_t i) {
    if (i == 0) w.set_address_model(false);
    if (i == 2) w.set_address_model(true);
  });
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(c.events.size(), events.size());
  for (std::size_t i = 0; i < events.size(); ++i) EXPECT_EQ(c.events[i], events[i]) << i;
}

TEST_F(PredictorFile, ResolutionOneKeepsExactNanoseconds) {
  std::vector<Event> events;
  std::uint64_t t = 999'999'999'999;
  for (int i = 0; i < 1000; ++i) events.push_back(alloc(t += 1 + i % 7, 1, 1, 0, 0));
  events.push_back(alloc(t - 3, 1, 1, 0, 0));  // backwards by 3 ns
  ReadResult r;
  Collected c = write_and_read(events, 1, r);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(c.header.time_resolution_ns, 1u);
  ASSERT_EQ(c.events.size(), events.size());
  for (std::size_t i = 0; i < events.size(); ++i)
    EXPECT_EQ(c.events[i].time_ns, events[i].time_ns) << i;
}

TEST_F(PredictorFile, CoarseResolutionRoundsDownAndKeepsPerThreadOrder) {
  std::vector<Event> events = allocator_shaped_events();
  // Interleave the two threads' events and jitter the times by a few ns.
  std::vector<Event> mixed;
  std::size_t half = events.size() / 2;
  for (std::size_t i = 0; i < half; ++i) {
    Event a = events[i], b = events[half + i];
    a.time_ns += i % 3;
    b.time_ns += 500 * (i % 5);
    mixed.push_back(a);
    mixed.push_back(b);
  }
  ReadResult r;
  Collected c = write_and_read(mixed, 1000, r);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(c.header.time_resolution_ns, 1000u);
  ASSERT_EQ(c.events.size(), mixed.size());
  for (std::size_t i = 0; i < mixed.size(); ++i) {
    Event expected = mixed[i];
    expected.time_ns = expected.time_ns / 1000 * 1000;
    EXPECT_EQ(c.events[i], expected) << i;  // same order, every other field exact
  }
}

TEST_F(PredictorFile, WriterRejectsAResolutionOutsideTheRange) {
  for (std::uint32_t bad : {0u, 1'000'000'001u}) {
    TraceHeader h;
    h.time_resolution_ns = bad;
    EXPECT_THROW(TraceWriter(path, h), std::invalid_argument) << bad;
  }
}

TEST_F(PredictorFile, ReaderRejectsAZeroResolutionInTheHeader) {
  { TraceWriter w(path, TraceHeader{}); }
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  in.close();
  // The header payload ends with the u32 resolution, just before its crc32.
  std::uint32_t length;
  std::memcpy(&length, bytes.data() + 12, 4);
  std::size_t field = 16 + length - 4;
  ASSERT_EQ(bytes[field], 1);
  bytes[field] = 0;
  std::uint32_t crc = static_cast<std::uint32_t>(
      ::crc32(0, reinterpret_cast<const Bytef*>(bytes.data() + 8), static_cast<uInt>(8 + length)));
  std::memcpy(bytes.data() + 16 + length, &crc, 4);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  TraceReader reader(path);
  EXPECT_NE(reader.header_error().find("time resolution 0 ns in the header is outside"),
            std::string::npos)
      << reader.header_error();
}

TEST_F(PredictorFile, ManyThreadsSplitTheChunkAndStillRoundTrip) {
  const std::uint32_t threads = format::kMaxThreadsPerChunk + 10;
  {
    TraceWriter w(path, TraceHeader{});
    w.add_pool({1, 0, "malloc", PoolKind::heap, MemorySpace::host, -1});
    for (std::uint32_t th = 1; th <= threads; ++th) w.add_thread({th, th, "t"});
    for (std::uint32_t th = 1; th <= threads; ++th) w.add_event(alloc(th, th, 0, 0x1000 * th, 8));
  }
  Collected c;
  ReadResult r = test::read_trace(path, c);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.chunks, 2u);  // the writer started a new chunk at the limit
  ASSERT_EQ(c.events.size(), threads);
  for (std::uint32_t th = 1; th <= threads; ++th) {
    EXPECT_EQ(c.events[th - 1].thread, th);
    EXPECT_EQ(c.events[th - 1].address, 0x1000u * th);
  }
}

// A chunk's writer memory is its raw streams, their copy for zstd and the
// frame, beside a codec state per thread: a chunk with 32 or more threads
// ends at half kTargetRawChunk (cross-thread-64's 64 threads: the writer's
// large blocks 4.5 -> 2.3 MiB). The same events from 16 threads keep whole
// chunks; both read back exactly.
TEST_F(PredictorFile, ChunksOfManyThreadsEndAtHalfTheRawSize) {
  auto chunks_of = [&](std::uint32_t threads) {
    std::vector<Event> events;
    std::mt19937_64 rng(28);
    for (std::uint64_t i = 0; i < 600'000; ++i) {
      auto th = static_cast<std::uint32_t>(1 + i % threads);
      events.push_back(
          alloc(1'000 + i, th, 0, 0x7f00'0000'0000ull + (rng() >> 24 << 4), 16 + rng() % 4096));
    }
    ReadResult r;
    Collected c = write_and_read(events, 1, r, [&](TraceWriter& w, std::size_t i) {
      if (i == 0)
        for (std::uint32_t th = 3; th <= threads; ++th) w.add_thread({th, th, "t"});
    });
    EXPECT_TRUE(r.ok) << r.error;
    EXPECT_EQ(c.events.size(), events.size());
    return r.chunks;
  };
  std::uint64_t few = chunks_of(16), many = chunks_of(64);
  EXPECT_GE(few, 3u);  // enough raw bytes for the comparison to mean something
  EXPECT_GE(many, few * 2 - 1) << few << " chunks of 16 threads' events";
}

}  // namespace
}  // namespace memtrail
