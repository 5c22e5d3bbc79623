// write -> read round trips of the .mtr format: every event kind, every table
// record, extreme values, multi-chunk files and randomized event streams.
#include <gtest/gtest.h>

#include <cstdio>
#include <limits>
#include <random>

#include "memtrail/trace_file.hpp"
#include "trace_collector.hpp"

namespace memtrail {
namespace {

using test::Collected;
constexpr std::uint64_t kMax64 = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint32_t kMax32 = std::numeric_limits<std::uint32_t>::max();

TraceHeader sample_header() {
  TraceHeader h;
  h.pid = 4242;
  h.ppid = kMax32;
  h.start_realtime_ns = 1'700'000'000'123'456'789ull;
  h.start_monotonic_ns = kMax64;
  h.clock_id = 7;
  h.command_line = "prog --flag 'quoted arg' \xc3\xa9";
  h.executable = "/usr/bin/prog";
  h.hostname = "host";
  return h;
}

struct Fixture : ::testing::Test {
  std::string path = test::temp_path("round-trip.mtr");
  void TearDown() override { std::remove(path.c_str()); }
};

TEST_F(Fixture, HeaderRoundTrips) {
  TraceHeader h = sample_header();
  { TraceWriter w(path, h); }
  Collected c;
  ReadResult r = test::read_trace(path, c);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.events, 0u);
  EXPECT_EQ(c.header.pid, h.pid);
  EXPECT_EQ(c.header.ppid, h.ppid);
  EXPECT_EQ(c.header.start_realtime_ns, h.start_realtime_ns);
  EXPECT_EQ(c.header.start_monotonic_ns, h.start_monotonic_ns);
  EXPECT_EQ(c.header.clock_id, h.clock_id);
  EXPECT_EQ(c.header.command_line, h.command_line);
  EXPECT_EQ(c.header.executable, h.executable);
  EXPECT_EQ(c.header.hostname, h.hostname);
  EXPECT_EQ(c.header.version, kTraceFormatVersion);
}

TEST_F(Fixture, EveryTableRecordRoundTripsWithExtremeValues) {
  ModuleInfo m1{1,
                "/lib/x86_64-linux-gnu/libc.so.6",
                0x7f0000000000,
                0x7f0000001000,
                0x7f0000200000,
                "0123456789abcdef0123456789abcdef01234567"};
  ModuleInfo m2{kMax32, "", kMax64, kMax64 - 1, kMax64, ""};
  ThreadInfo t1{1, 123456, "main"};
  ThreadInfo t2{kMax32, kMax64, std::string(300, 'x')};
  ThreadInfo t1_renamed{1, 123456, "worker-0"};
  PoolInfo p1{1, 0, "malloc", PoolKind::heap, MemorySpace::host, -1};
  PoolInfo p2{
      2, 1, "cuda:3", PoolKind::cuda, MemorySpace::device, std::numeric_limits<int32_t>::max()};
  PoolInfo p3{
      kMax32, 2, "", PoolKind::other, MemorySpace::mmap, std::numeric_limits<int32_t>::min()};
  StackNode n1{1, 0, 0x401000}, n2{2, 1, kMax64}, n3{kMax32, 2, 0};
  ScopeInfo s1{1, "train-step", ScopeKind::iteration, 2}, s2{kMax32, "", ScopeKind::workspace, 0};
  {
    TraceWriter w(path, sample_header());
    w.add_string(1, "hello");
    w.add_string(kMax32, std::string("\0binary\xff", 8));
    w.add_module(m1);
    w.add_module(m2);
    w.add_thread(t1);
    w.add_thread(t2);
    w.add_thread(t1_renamed);
    w.add_pool(p1);
    w.add_pool(p2);
    w.add_pool(p3);
    w.add_stack_node(n1);
    w.add_stack_node(n2);
    w.add_stack_node(n3);
    w.add_scope(s1);
    w.add_scope(s2);
  }
  Collected c;
  ReadResult r = test::read_trace(path, c);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(c.strings.size(), 2u);
  EXPECT_EQ(c.strings[0], std::make_pair(1u, std::string("hello")));
  EXPECT_EQ(c.strings[1], std::make_pair(kMax32, std::string("\0binary\xff", 8)));
  EXPECT_EQ(c.modules, (std::vector<ModuleInfo>{m1, m2}));
  EXPECT_EQ(c.threads, (std::vector<ThreadInfo>{t1, t2, t1_renamed}));
  EXPECT_EQ(c.pools, (std::vector<PoolInfo>{p1, p2, p3}));
  EXPECT_EQ(c.stack_nodes, (std::vector<StackNode>{n1, n2, n3}));
  EXPECT_EQ(c.scopes, (std::vector<ScopeInfo>{s1, s2}));
}

// Tables every event below may refer to.
void add_tables(TraceWriter& w) {
  w.add_thread({1, 100, "main"});
  w.add_thread({2, 101, "worker"});
  w.add_thread({kMax32, kMax64, "last"});
  w.add_pool({1, 0, "malloc", PoolKind::heap, MemorySpace::host, -1});
  w.add_pool({kMax32, 0, "big", PoolKind::caching, MemorySpace::device, 0});
  w.add_stack_node({1, 0, 0x1000});
  w.add_stack_node({kMax32, 1, 0x2000});
  w.add_scope({1, "scope", ScopeKind::tidy, 1});
  w.add_scope({kMax32, "ws", ScopeKind::workspace, 1});
  w.add_string(1, "note");
  w.add_string(kMax32, "{\"pool\":\"big\"}");
}

std::vector<Event> every_kind_events() {
  std::vector<Event> v;
  auto ev = [&](EventKind k, std::uint64_t t, std::uint32_t thread, std::uint32_t pool,
                std::uint32_t stack, std::uint8_t detail, std::uint64_t addr, std::uint64_t size,
                std::uint64_t req, std::uint64_t aux) {
    v.push_back(Event{t, thread, pool, stack, k, detail, addr, size, req, aux});
  };
  ev(EventKind::alloc, 0, 1, 1, 1, 1, 0x5555'0000'1000, 64, 60, 0);
  ev(EventKind::alloc, 10, 1, 1, 1, 4, kMax64, kMax64, 0, 4096);       // extreme size, alignment
  ev(EventKind::free, 20, 1, 1, 0, 9, 0x5555'0000'1000, 64, 0, 0);     // by ordinal reference
  ev(EventKind::free, 25, 1, 1, 0, 9, 0x1234, 0, 0, 0);                // unknown block
  ev(EventKind::reuse, kMax64, 2, kMax32, kMax32, 10, 0x10, 1, 1, 0);  // extreme time
  ev(EventKind::free, 5, 2, kMax32, kMax32, 10, 0x10, 7, 0, 0);        // time back, size != block
  ev(EventKind::segment_reserve, 30, 1, kMax32, 0, 0, 0x7f00'0000'0000, 2 << 20, 0, 0);
  ev(EventKind::segment_release, 31, 1, kMax32, 0, 1, 0x7f00'0000'0000, 2 << 20, 0, 0);
  ev(EventKind::scope_begin, 32, 1, 0, 0, 0, 0, 0, 0, 1);
  ev(EventKind::scope_end, 33, 1, 0, 0, 0, 0, 0, 0, kMax32);
  ev(EventKind::workspace_reset, 34, kMax32, 1, 0, 0, 0, 1000, 0, kMax32);
  ev(EventKind::workspace_learn, 35, kMax32, 1, 0, 0, 0, 5000, 0, 1);
  ev(EventKind::spill, 36, 1, 1, 1, 0, 0xdead0, 77, 0, 1);
  ev(EventKind::donate, 37, 1, 1, 0, 0, 0xbeef0, 88, 0, 0);
  ev(EventKind::donate_rejected, 38, 1, 1, 0, 0, 0xbeef0, 88, 0, kMax32);
  ev(EventKind::oom, 39, 1, kMax32, 1, 0, 0, 1ull << 40, (1ull << 40) + 512, kMax32);
  ev(EventKind::sample, 40, 0, 0, 0, 0, 123 << 20, 45 << 20, 67 << 20, kMax64);
  ev(EventKind::mark, 41, 0, 0, 0, 0, 0, 0, 0, 1);
  ev(EventKind::reachability, 42, 1, 1, 1, 2, kMax64 - 1, 3, 0, 0);
  ev(EventKind::alloc, 43, 0, 0, 0, 0, 0, 0, kMax64, kMax64);  // all-zero thread/pool, odd req
  return v;
}

TEST_F(Fixture, EveryEventKindRoundTripsWithAllFields) {
  std::vector<Event> events = every_kind_events();
  int kinds_seen[kEventKindCount] = {};
  for (const Event& e : events) ++kinds_seen[static_cast<int>(e.kind)];
  for (int k = 1; k < kEventKindCount; ++k) ASSERT_GT(kinds_seen[k], 0) << "kind " << k;
  {
    TraceWriter w(path, sample_header());
    add_tables(w);
    for (const Event& e : events) w.add_event(e);
    EXPECT_EQ(w.events_written(), events.size());
  }
  Collected c;
  ReadResult r = test::read_trace(path, c);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.events, events.size());
  EXPECT_EQ(r.dropped_bytes, 0u);
  EXPECT_TRUE(r.warning.empty()) << r.warning;
  ASSERT_EQ(c.events.size(), events.size());
  for (std::size_t i = 0; i < events.size(); ++i)
    EXPECT_EQ(c.events[i], events[i]) << "event " << i;
}

// A MarkDetail::lost mark (events the recorder could not record): count,
// reason and its text come back as written, in the version-1 format.
TEST_F(Fixture, LostEventsMarkRoundTrips) {
  Event lost;
  lost.kind = EventKind::mark;
  lost.time_ns = 12345;
  lost.detail = static_cast<std::uint8_t>(MarkDetail::lost);
  lost.size = 393198;
  lost.requested = static_cast<std::uint8_t>(LostReason::before_startup);
  lost.aux = 1;
  {
    TraceWriter w(path, sample_header());
    w.add_string(1, "before start-up: beyond the early buffer");
    w.add_event(lost);
  }
  Collected c;
  ReadResult r = test::read_trace(path, c);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(c.header.version, 1);
  ASSERT_EQ(c.events.size(), 1u);
  EXPECT_EQ(c.events[0], lost);
  ASSERT_EQ(c.strings.size(), 1u);
  EXPECT_EQ(c.strings[0].second, "before start-up: beyond the early buffer");
}

TEST_F(Fixture, TablesArriveBeforeTheEventsThatUseThem) {
  {
    TraceWriter w(path, sample_header());
    w.add_thread({1, 1, "t"});
    w.add_pool({1, 0, "p", PoolKind::heap, MemorySpace::host, -1});
    w.add_event({1, 1, 1, 0, EventKind::alloc, 0, 0x10, 8, 8, 0});
    w.flush();  // the next table record lands in a later chunk
    w.add_stack_node({1, 0, 0x400});
    w.add_event({2, 1, 1, 1, EventKind::alloc, 0, 0x20, 8, 8, 0});
  }
  Collected c;
  ReadResult r = test::read_trace(path, c);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.chunks, 2u);
  EXPECT_EQ(c.order, (std::vector<std::string>{"thread", "pool", "event", "stack_node", "event"}));
}

// A randomized stream with the shapes the encoder predicts (and breaks):
// several threads, frees of live blocks, time going back, pool switches,
// enough events for several chunks.
TEST_F(Fixture, RandomizedMultiChunkStreamRoundTrips) {
  std::mt19937_64 rng(12345);
  std::vector<Event> events;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> live;
  std::uint64_t t[4] = {0, 0, 0, 0};
  for (int i = 0; i < 600'000; ++i) {
    Event e;
    std::uint32_t th = rng() % 4;
    e.thread = th;
    t[th] += (rng() % 16 == 0) ? -(rng() % 50) : rng() % 300;
    e.time_ns = t[th];
    e.pool = rng() % 3;
    e.stack = rng() % 4 == 0 ? rng() % 3 : 1;
    int what = rng() % 10;
    if (what < 5 || live.empty()) {
      e.kind = (what == 0) ? EventKind::reuse : EventKind::alloc;
      e.address = 0x5000'0000 + (rng() % 4096) * 16;
      e.size = 8u << (rng() % 14);
      e.requested = rng() % 8 == 0 ? e.size - rng() % 8 : e.size;
      e.detail = rng() % 3;
      live.emplace_back(e.pool, e.address);
    } else if (what < 9) {
      e.kind = EventKind::free;
      std::size_t j = rng() % live.size();
      e.pool = live[j].first;
      e.address = live[j].second;
      live[j] = live.back();
      live.pop_back();
      e.size = rng() % 2 ? 0 : 8u << (rng() % 14);
      e.detail = 9;
    } else {
      e.kind = EventKind::sample;
      e.pool = 0;
      e.address = rng();
      e.size = rng();
      e.requested = rng();
      e.aux = rng();
    }
    events.push_back(e);
  }
  std::uint64_t bytes;
  {
    TraceWriter w(path, sample_header());
    w.add_thread({1, 1, "a"});
    w.add_thread({2, 2, "b"});
    w.add_thread({3, 3, "c"});
    w.add_pool({1, 0, "p1", PoolKind::heap, MemorySpace::host, -1});
    w.add_pool({2, 0, "p2", PoolKind::heap, MemorySpace::host, -1});
    w.add_stack_node({1, 0, 0x400});
    w.add_stack_node({2, 1, 0x500});
    for (const Event& e : events) w.add_event(e);
    w.finish();
    bytes = w.bytes_written();
  }
  Collected c;
  ReadResult r = test::read_trace(path, c);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.complete);
  EXPECT_GT(r.chunks, 1u);
  ASSERT_EQ(c.events.size(), events.size());
  for (std::size_t i = 0; i < events.size(); ++i)
    ASSERT_EQ(c.events[i], events[i]) << "event " << i;
  EXPECT_GT(bytes, 0u);
}

std::string file_bytes(const std::string& path) {
  std::string out;
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    char buf[65536];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
    std::fclose(f);
  }
  return out;
}

// The recorder's exit scan has the writer give back what it builds chunks
// in (TraceWriter::release_scratch) between flushes, and then records more:
// the file must be the very one a writer that kept its buffers writes, and
// a release while a chunk is being built must change nothing.
TEST_F(Fixture, ReleasingTheScratchBetweenChunksWritesTheSameFile) {
  std::mt19937_64 rng(2028);
  std::vector<Event> events(60'000);
  std::uint64_t time = 0;
  for (Event& e : events) {
    e.kind = rng() % 2 ? EventKind::alloc : EventKind::free;
    e.thread = 1 + rng() % 3;
    e.time_ns = time += rng() % 500;
    e.pool = 1;
    e.stack = 1 + rng() % 2;
    e.address = 0x7000'0000 + (rng() % 2048) * 32;
    e.size = 16u << (rng() % 10);
    e.requested = e.size;
  }
  auto write = [&](const std::string& to, bool release) {
    TraceWriter w(to, sample_header());
    for (std::uint32_t thread = 1; thread <= 3; ++thread) w.add_thread({thread, thread, "t"});
    w.add_pool({1, 0, "p1", PoolKind::heap, MemorySpace::host, -1});
    w.add_stack_node({1, 0, 0x400});
    w.add_stack_node({2, 1, 0x500});
    for (std::size_t i = 0; i < events.size(); ++i) {
      w.add_event(events[i]);
      if (i % 20'000 == 19'999) {
        if (release) w.release_scratch();  // mid-chunk: nothing to give back
        w.flush();
        if (release) w.release_scratch();
      }
    }
    w.finish();
  };
  test::TempFile kept("scratch-kept.mtr");
  write(kept.path, false);
  write(path, true);
  const std::string expected = file_bytes(kept.path);
  ASSERT_GT(expected.size(), 0u);
  EXPECT_TRUE(file_bytes(path) == expected);
  Collected c;
  ReadResult r = test::read_trace(path, c);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.chunks, 3u);
  EXPECT_EQ(c.events.size(), events.size());
}

// Stack node records code id and parent as differences from the chunk's
// previous node (kTagStackNodeDelta): ids out of order, a parent above its
// child, differences that wrap mod 2^32, and a chunk end between nodes
// (where the previous id starts again at 0) all come back exactly.
TEST_F(Fixture, StackNodeIdsRoundTripInAnyOrderAcrossChunks) {
  std::vector<StackNode> nodes = {
      {5, 0, 0x401000},      {6, 5, 0x401010},          {7, 5, kMax64},
      {100000, 7, 0},        {8, 100000, 0x401000},     {kMax32, 8, 0x7f0000000000},
      {9, kMax32, 0x401020}, {kMax32 - 1, 9, 0x401030}, {1, kMax32 - 1, 0x401040},
      {2, 1, 0x401050}};
  {
    TraceWriter w(path, sample_header());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      w.add_stack_node(nodes[i]);
      if (i == 3 || i == 6) w.flush();  // the next node starts a chunk
    }
    w.finish();
  }
  Collected c;
  ReadResult r = test::read_trace(path, c);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.chunks, 3u);
  EXPECT_EQ(c.stack_nodes, nodes);
}

// The point of the difference coding: a stack trie's nodes, ids one after
// another and parents among the recent ones, cost zstd about 0.85 bytes a
// node instead of 5.7 as absolute varints (docs/BENCHMARKS.md, "where a
// trace's bytes go"; cc1plus's 779,605 nodes). Here new stacks grow as
// chains (a node's parent is the node before, 7 times in 8, else one of
// the last 64) over 64 code addresses; 2 bytes a node is the bound.
TEST_F(Fixture, StackNodeRecordsOfATrieCompressBelowTwoBytesEach) {
  constexpr std::uint32_t kNodes = 200000;
  std::mt19937 rng(28);
  {
    TraceWriter w(path, sample_header());
    for (std::uint32_t id = 1; id <= kNodes; ++id) {
      std::uint32_t back = rng() % 8 != 0 ? 1 : 1 + rng() % 64;
      std::uint32_t parent = back >= id ? 0 : id - back;
      w.add_stack_node({id, parent, 0x400000 + 16 * std::uint64_t{rng() % 64}});
    }
    w.finish();
  }
  Collected c;
  ReadResult r = test::read_trace(path, c);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(c.stack_nodes.size(), kNodes);
  std::FILE* f = std::fopen(path.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::fseek(f, 0, SEEK_END);
  double per_node = static_cast<double>(std::ftell(f)) / kNodes;
  std::fclose(f);
  EXPECT_LT(per_node, 2.0);
}

TEST_F(Fixture, WriterRejectsAnInvalidKind) {
  TraceWriter w(path, sample_header());
  Event e;
  e.kind = static_cast<EventKind>(0);
  EXPECT_THROW(w.add_event(e), std::invalid_argument);
  e.kind = static_cast<EventKind>(kEventKindCount);
  EXPECT_THROW(w.add_event(e), std::invalid_argument);
}

TEST(TraceWriterOpen, UnwritablePathThrowsOneLine) {
  try {
    TraceWriter w("/nonexistent-dir/x.mtr", TraceHeader{});
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("/nonexistent-dir/x.mtr"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace memtrail
