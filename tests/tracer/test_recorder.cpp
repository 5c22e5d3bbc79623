// The recorder through its public API: nothing lost or reordered across
// threads, tables and thread names reach the file, live-block tracking,
// the exit hook, samples and environment options.
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <thread>

#include "memtrail/detail/environment.hpp"
#include "memtrail/detail/live_blocks.hpp"
#include "memtrail/detail/recording.hpp"
#include "memtrail/detail/reentrancy.hpp"
#include "memtrail/detail/runtime_hooks.hpp"
#include "memtrail/detail/session_state.hpp"
#include "memtrail/detail/test_counters.hpp"
#include "memtrail/detail/thread_registry.hpp"
#include "memtrail/recorder.hpp"
#include "memtrail/trace_file.hpp"
#include "one_cpu.hpp"
#include "trace_collector.hpp"

namespace memtrail {
namespace {

using test::Collected;

RecorderOptions quiet_options(const std::string& path) {
  RecorderOptions o;
  o.output = path;
  o.stacks = false;
  o.sample_interval_ms = 0;
  return o;
}

// Counts allocs and frees in file order; a free of a block not live then
// (its alloc later in the file, or never) is an early free.
struct AllocFreeOrder : TraceVisitor {
  std::set<std::uint64_t> live;
  std::uint64_t allocs = 0, frees = 0, early_frees = 0;
  void on_event(const Event& e) override {
    if (e.kind == EventKind::alloc) {
      ++allocs;
      live.insert(e.address);
    } else if (e.kind == EventKind::free) {
      ++frees;
      if (!live.erase(e.address)) ++early_frees;
    }
  }
};

struct RecorderTest : ::testing::Test {
  std::string path = test::temp_path("recorder.mtr");
  void TearDown() override {
    stop();
    std::remove(path.c_str());
  }
};

TEST_F(RecorderTest, EightThreadsTimesAMillionEventsNothingLostNothingReordered) {
  constexpr int kThreads = 8;
  constexpr std::uint64_t kPerThread = 1'000'000;
  ASSERT_TRUE(start(quiet_options(path)));
  std::uint32_t pool = register_pool({0, 0, "test", PoolKind::other, MemorySpace::host, -1});
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([t, pool] {
      set_thread_name("worker-" + std::to_string(t));
      for (std::uint64_t i = 0; i < kPerThread; ++i) {
        Event e;
        e.kind = EventKind::alloc;
        e.pool = pool;
        e.address = 0x10000 + (i % 512) * 64;
        e.size = 64;
        e.requested = 64;
        e.aux = i;  // per-thread sequence number
        record(e);
      }
    });
  for (auto& th : threads) th.join();
  stop();

  struct Counter : TraceVisitor {
    std::map<std::uint32_t, std::string> names;
    std::map<std::string, std::uint64_t> next;  // by thread name
    std::uint64_t out_of_order = 0, total = 0, threads_unknown = 0;
    void on_thread(const ThreadInfo& t) override { names[t.id] = t.name; }
    void on_event(const Event& e) override {
      if (e.kind != EventKind::alloc) return;
      ++total;
      auto it = names.find(e.thread);
      if (it == names.end()) {
        ++threads_unknown;
        return;
      }
      std::uint64_t& expect = next[it->second];
      if (e.aux != expect) ++out_of_order;
      expect = e.aux + 1;
    }
  } c;
  TraceReader reader(path);
  ReadResult r = reader.read(c);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(c.total, kThreads * kPerThread);
  EXPECT_EQ(c.out_of_order, 0u);
  EXPECT_EQ(c.threads_unknown, 0u);
  ASSERT_EQ(c.next.size(), static_cast<std::size_t>(kThreads));
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(c.next["worker-" + std::to_string(t)], kPerThread);
}

// Thread A allocates, thread B frees what A handed over. However the writer
// interleaves its drains, the file must show every alloc before its free.
TEST_F(RecorderTest, AFreeNeverPrecedesItsAllocAcrossThreads) {
  constexpr std::uint64_t kBlocks = 200'000;
  ASSERT_TRUE(start(quiet_options(path)));
  std::uint32_t pool = register_pool({0, 0, "handoff", PoolKind::other, MemorySpace::host, -1});
  constexpr std::size_t kRing = 1024;
  std::vector<std::atomic<std::uint64_t>> ring(kRing);
  std::atomic<std::uint64_t> head{0}, tail{0};
  std::atomic<bool> consumer_registered{false};
  // The producer registers last, so the writer reads its buffer first: the
  // order in which a free could overtake its alloc without the drain cut.
  std::thread producer([&] {
    while (!consumer_registered.load()) std::this_thread::yield();
    for (std::uint64_t i = 1; i <= kBlocks; ++i) {
      while (head.load(std::memory_order_acquire) - tail.load(std::memory_order_acquire) >= kRing)
        std::this_thread::yield();
      record_alloc(pool, reinterpret_cast<void*>(i * 16), 16, 16);
      ring[head.load(std::memory_order_relaxed) % kRing].store(i, std::memory_order_relaxed);
      head.fetch_add(1, std::memory_order_release);
    }
  });
  std::thread consumer([&] {
    record_mark("consumer");
    consumer_registered.store(true);
    for (std::uint64_t n = 0; n < kBlocks; ++n) {
      while (tail.load(std::memory_order_relaxed) == head.load(std::memory_order_acquire))
        std::this_thread::yield();
      std::uint64_t i =
          ring[tail.load(std::memory_order_relaxed) % kRing].load(std::memory_order_relaxed);
      tail.fetch_add(1, std::memory_order_release);
      record_free(pool, reinterpret_cast<void*>(i * 16));
    }
  });
  producer.join();
  consumer.join();
  stop();

  AllocFreeOrder order;
  TraceReader reader(path);
  ReadResult r = reader.read(order);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(order.allocs, kBlocks);
  EXPECT_EQ(order.frees, kBlocks);
  EXPECT_EQ(order.early_frees, 0u);
  EXPECT_TRUE(order.live.empty());
}

// Two threads take turns, each recording an event right after it sees the
// other's turn end: event k is recorded after event k-1 was, on another
// core, so the file must hold them in order. A time stamp read before the
// load that saw the turn (a plain rdtsc runs ahead of loads) put 120-370
// of 200,000 events before the one they followed, in the same drain.
TEST_F(RecorderTest, AnEventIsWrittenAfterTheOtherThreadsEventItSaw) {
  constexpr std::uint64_t kTurns = 200'000;
  // The players run on two different CPUs, so each sees the other's turn
  // end while it spins (on one CPU a turn ends in a context switch).
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  if (CPU_COUNT(&allowed) < 2) GTEST_SKIP() << "needs two CPUs";
  int cpus[2], found = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE && found < 2; ++cpu)
    if (CPU_ISSET(cpu, &allowed)) cpus[found++] = cpu;
  ASSERT_TRUE(start(quiet_options(path)));
  std::uint32_t pool = register_pool({0, 0, "turns", PoolKind::other, MemorySpace::host, -1});
  std::atomic<std::uint64_t> turn{0};
  auto player = [&](std::uint64_t first) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus[first], &one);
    sched_setaffinity(0, sizeof one, &one);
    for (std::uint64_t k = first; k < kTurns; k += 2) {
      // Spin briefly, then yield: on a loaded machine the other player may
      // need this core.
      for (int spins = 0; turn.load(std::memory_order_acquire) != k;)
        if (++spins > 4096) std::this_thread::yield();
      record_alloc(pool, reinterpret_cast<void*>((k + 1) * 16), 16, 16);
      turn.store(k + 1, std::memory_order_release);
    }
  };
  std::thread even(player, 0), odd(player, 1);
  even.join();
  odd.join();
  stop();

  struct InOrder : TraceVisitor {
    std::uint64_t last = 0, events = 0, behind = 0;
    void on_event(const Event& e) override {
      if (e.kind != EventKind::alloc) return;
      ++events;
      if (e.address < last) ++behind;
      last = e.address;
    }
  } order;
  TraceReader reader(path);
  ReadResult r = reader.read(order);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(order.events, kTurns);
  EXPECT_EQ(order.behind, 0u);
}

// With one core for two busy threads the writer thread stands aside and the
// program threads drain their own backlog (drain_sharing.cpp). The file must
// come out as exact as when the writer drains: every event, each free after
// its alloc, and times (samples included) in order and not squashed.
TEST_F(RecorderTest, ProgramThreadsThatFillTheCoresDrainThemselvesExactly) {
  test::OneCpu one_cpu;
  ASSERT_TRUE(one_cpu.ok());
  RecorderOptions options = quiet_options(path);
  options.track_live_heap = true;
  options.sample_interval_ms = 1;
  bool started = start(options);
  constexpr int kThreads = 2;
  constexpr std::uint64_t kPairs = 400'000;
  std::uint32_t heap = heap_pool();
  std::vector<std::thread> threads;
  std::atomic<std::uint64_t> errno_changed{0};
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([t, heap, &errno_changed] {
      // Each thread frees its blocks a while later, as churn does.
      std::uint64_t base = 0x100000000ull * (t + 1);
      for (std::uint64_t i = 0; i < kPairs; ++i) {
        errno = EILSEQ;  // free() must keep errno (POSIX 2024), drain or not
        record_alloc(heap, reinterpret_cast<void*>(base + (i % 4096) * 64), 48, 40);
        if (i >= 16) record_free(heap, reinterpret_cast<void*>(base + ((i - 16) % 4096) * 64));
        if (errno != EILSEQ) errno_changed.fetch_add(1);
      }
      for (std::uint64_t i = kPairs - 16; i < kPairs; ++i)
        record_free(heap, reinterpret_cast<void*>(base + (i % 4096) * 64));
    });
  for (auto& th : threads) th.join();
  std::uint64_t drains = detail::program_thread_drains();
  stop();
  ASSERT_TRUE(started);
  EXPECT_GT(drains, 0u);
  EXPECT_EQ(errno_changed.load(), 0u);

  struct Check : AllocFreeOrder {
    std::uint64_t samples = 0, backwards = 0;
    std::uint64_t last_time = 0, same_time_run = 0, longest_same_time_run = 0;
    void on_event(const Event& e) override {
      if (e.time_ns < last_time) ++backwards;
      same_time_run = e.time_ns == last_time ? same_time_run + 1 : 0;
      longest_same_time_run = std::max(longest_same_time_run, same_time_run);
      last_time = e.time_ns;
      if (e.kind == EventKind::sample) ++samples;
      AllocFreeOrder::on_event(e);
    }
  } check;
  TraceReader reader(path);
  ReadResult r = reader.read(check);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(check.allocs, kThreads * kPairs);
  EXPECT_EQ(check.frees, kThreads * kPairs);
  EXPECT_EQ(check.early_frees, 0u);
  EXPECT_TRUE(check.live.empty());
  EXPECT_EQ(check.backwards, 0u);
  EXPECT_GT(check.samples, 0u);
  // Time stamps are not squashed: a sample stamped `now` while events
  // stamped before it still waited would pull all of those up to its time
  // (tens of thousands in a row); at the trace's 1 us resolution about 50
  // events of one thread share a stamp.
  EXPECT_LT(check.longest_same_time_run, 1000u);
}

TEST_F(RecorderTest, EveryRecordFunctionAndTableReachesTheFile) {
  ASSERT_TRUE(start(quiet_options(path)));
  std::uint32_t pool =
      register_pool({0, 0, "activations", PoolKind::caching, MemorySpace::device, 2});
  std::uint32_t scope = register_scope("step", ScopeKind::iteration, pool);
  int block;
  record_segment(EventKind::segment_reserve, pool, 0x7f0000000000, 2 << 20);
  record_scope_begin(scope, pool);
  record_alloc(pool, &block, 512, 500);
  record_reuse(pool, &block, 512, 512);
  record_free(pool, &block, 512);
  record_scope_end(scope, pool);
  record_segment(EventKind::segment_release, pool, 0x7f0000000000, 2 << 20, SegmentDetail::map);
  record_mark("checkpoint");
  stop();

  Collected c;
  ReadResult r = test::read_trace(path, c);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(c.events.size(), 8u);
  auto addr = reinterpret_cast<std::uintptr_t>(&block);
  const std::vector<
      std::tuple<EventKind, std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t>>
      expected = {
          {EventKind::segment_reserve, 0x7f0000000000, 2 << 20, 0, 0},
          {EventKind::scope_begin, 0, 0, 0, scope},
          {EventKind::alloc, addr, 512, 500, 0},
          {EventKind::reuse, addr, 512, 512, 0},
          {EventKind::free, addr, 512, 0, 0},
          {EventKind::scope_end, 0, 0, 0, scope},
          {EventKind::segment_release, 0x7f0000000000, 2 << 20, 0, 0},
          {EventKind::mark, 0, 0, 0, intern_string("checkpoint")},
      };
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const Event& e = c.events[i];
    auto [kind, a, size, req, aux] = expected[i];
    EXPECT_EQ(e.kind, kind) << i;
    EXPECT_EQ(e.address, a) << i;
    EXPECT_EQ(e.size, size) << i;
    EXPECT_EQ(e.requested, req) << i;
    EXPECT_EQ(e.aux, aux) << i;
    EXPECT_EQ(e.pool, i == 7 ? 0u : pool) << i;
    EXPECT_NE(e.thread, 0u) << i;
    if (i > 0) {
      EXPECT_GE(e.time_ns, c.events[i - 1].time_ns);
    }
  }
  EXPECT_EQ(c.events[6].detail, static_cast<std::uint8_t>(SegmentDetail::map));
  EXPECT_EQ(c.events[2].detail, static_cast<std::uint8_t>(AllocFn::pool));
  bool found_pool = false, found_scope = false, found_string = false;
  for (auto& p : c.pools)
    found_pool |= p.id == pool && p.name == "activations" && p.kind == PoolKind::caching &&
                  p.space == MemorySpace::device && p.device == 2;
  for (auto& s : c.scopes) found_scope |= s.id == scope && s.name == "step" && s.pool == pool;
  for (auto& [id, text] : c.strings) found_string |= text == "checkpoint";
  EXPECT_TRUE(found_pool && found_scope && found_string);
  // Modules: the test program and libmemtrail.so, with build ids.
  bool found_lib = false;
  for (auto& m : c.modules)
    found_lib |= m.path.find("libmemtrail.so") != std::string::npos && !m.build_id.empty() &&
                 m.start < m.end;
  EXPECT_TRUE(found_lib);
  EXPECT_EQ(c.header.pid, static_cast<std::uint32_t>(::getpid()));
  EXPECT_NE(c.header.command_line.find("test_recorder"), std::string::npos);
}

// Program threads publish a 32-byte head, plus a tail only for what the
// head cannot hold (aux, an explicit stack id, a pool id above 255, a
// requested size that is neither the size nor 0): every field must come
// back the same either way.
TEST_F(RecorderTest, RawEventHeadAndTailCarryEveryField) {
  ASSERT_TRUE(start(quiet_options(path)));
  std::uint32_t small_pool = heap_pool();
  std::uint32_t big_pool = 0;
  while (big_pool <= 300)
    big_pool = register_pool({0, 0, "filler", PoolKind::system, MemorySpace::host, -1});
  auto make = [](EventKind kind, std::uint32_t pool, std::uint64_t size, std::uint64_t requested,
                 std::uint64_t aux, std::uint32_t stack) {
    Event e;
    e.kind = kind;
    e.pool = pool;
    e.address = 0x5000'0000 + size * 64;
    e.size = size;
    e.requested = requested;
    e.aux = aux;
    e.stack = stack;
    e.detail = 3;
    return e;
  };
  const std::vector<Event> sent = {
      make(EventKind::alloc, small_pool, 48, 48, 0, 0),     // head: requested = size
      make(EventKind::free, small_pool, 48, 0, 0, 0),       // head: requested = 0
      make(EventKind::alloc, small_pool, 0, 0, 0, 0),       // head: all zero
      make(EventKind::alloc, big_pool, 64, 64, 0, 0),       // tail: pool > 255
      make(EventKind::alloc, small_pool, 80, 77, 0, 0),     // tail: odd requested
      make(EventKind::alloc, small_pool, 96, 96, 4096, 0),  // tail: aux
      make(EventKind::free, 255, 112, 0, 0, 0),             // head: largest short pool
      make(EventKind::alloc, 256, 144, 144, 0, 0),          // tail: pool 256
      make(EventKind::alloc, small_pool, 128, std::uint64_t{1} << 40, 0, 0)  // tail: huge requested
  };
  for (const Event& e : sent) record(e);
  stop();

  Collected c;
  ReadResult r = test::read_trace(path, c);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(c.events.size(), sent.size());
  for (std::size_t i = 0; i < sent.size(); ++i) {
    const Event& got = c.events[i];
    EXPECT_EQ(got.kind, sent[i].kind) << i;
    EXPECT_EQ(got.pool, sent[i].pool) << i;
    EXPECT_EQ(got.address, sent[i].address) << i;
    EXPECT_EQ(got.size, sent[i].size) << i;
    EXPECT_EQ(got.requested, sent[i].requested) << i;
    EXPECT_EQ(got.aux, sent[i].aux) << i;
    EXPECT_EQ(got.detail, sent[i].detail) << i;
    EXPECT_EQ(got.stack, 0u) << i;  // stacks are off: no frames, no slot
  }
}

TEST_F(RecorderTest, ThreadNamesAndRenamesAreRecorded) {
  ASSERT_TRUE(start(quiet_options(path)));
  std::thread([] {
    set_thread_name("loader");
    record_mark("a");
    set_thread_name("loader-renamed-to-a-longer-name");
    record_mark("b");
  }).join();
  stop();
  Collected c;
  ASSERT_TRUE(test::read_trace(path, c).ok);
  ASSERT_EQ(c.events.size(), 2u);
  std::vector<std::string> names;
  for (auto& t : c.threads)
    if (t.id == c.events[0].thread) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"loader", "loader-renamed-to-a-longer-name"}));
}

TEST_F(RecorderTest, LiveHeapBlocksAndThreadRegistry) {
  RecorderOptions o = quiet_options(path);
  o.track_live_heap = true;
  ASSERT_TRUE(start(o));
  std::uint32_t heap = heap_pool();
  for (std::uintptr_t i = 1; i <= 10; ++i)
    record_alloc(heap, reinterpret_cast<void*>(i * 0x100), i * 8, i * 8, AllocFn::malloc);
  for (std::uintptr_t i = 1; i <= 10; i += 2)
    record_free(heap, reinterpret_cast<void*>(i * 0x100), 0, AllocFn::free);
  record_alloc(heap + 1000, reinterpret_cast<void*>(0x5000), 8, 8);  // another pool: not tracked
  std::thread([heap] { record_alloc(heap, reinterpret_cast<void*>(0x9000), 1, 1); }).join();
  detail::flush_all_threads();
  auto live = detail::live_blocks();
  std::map<std::uint64_t, std::uint64_t> got;
  for (auto& b : live) got[b.address] = b.size;
  EXPECT_EQ(got,
            (std::map<std::uint64_t, std::uint64_t>{
                {0x200, 16}, {0x400, 32}, {0x600, 48}, {0x800, 64}, {0xa00, 80}, {0x9000, 1}}));
  auto threads = detail::thread_registry();
  ASSERT_EQ(threads.size(), 2u);
  int exited = 0, alive = 0;
  for (auto& t : threads) {
    (t.exited ? exited : alive)++;
    EXPECT_LT(t.stack_low, t.stack_high);
    EXPECT_NE(t.thread_pointer, 0u);
    if (!t.exited) {
      int local;
      auto here = reinterpret_cast<std::uintptr_t>(&local);
      EXPECT_TRUE(here >= t.stack_low && here < t.stack_high);
      EXPECT_EQ(t.thread_pointer, reinterpret_cast<std::uintptr_t>(__builtin_thread_pointer()));
    }
  }
  EXPECT_EQ(exited, 1);
  EXPECT_EQ(alive, 1);
}

int g_hook_calls = 0;
void exit_hook() {
  ++g_hook_calls;
  Event e;
  e.kind = EventKind::reachability;
  e.address = 0x1234;
  e.size = 99;
  e.detail = static_cast<std::uint8_t>(LeakClass::direct);
  detail::record_unwalked_past_guard(e);
}

TEST_F(RecorderTest, ExitHookRunsBeforeTheTraceIsFinished) {
  ASSERT_TRUE(start(quiet_options(path)));
  detail::set_exit_hook(exit_hook);
  record_mark("before");
  stop();
  detail::set_exit_hook(nullptr);
  EXPECT_EQ(g_hook_calls, 1);
  Collected c;
  ReadResult r = test::read_trace(path, c);
  ASSERT_TRUE(r.ok && r.complete) << r.error;
  ASSERT_EQ(c.events.size(), 2u);
  EXPECT_EQ(c.events[1].kind, EventKind::reachability);
  EXPECT_EQ(c.events[1].address, 0x1234u);
  EXPECT_EQ(c.events[1].size, 99u);
}

TEST_F(RecorderTest, SamplesCarryRss) {
  RecorderOptions o = quiet_options(path);
  o.sample_interval_ms = 1;
  ASSERT_TRUE(start(o));
  detail::flush_all_threads();  // the writer samples on its first round
  stop();
  Collected c;
  ASSERT_TRUE(test::read_trace(path, c).ok);
  int samples = 0;
  for (auto& e : c.events)
    if (e.kind == EventKind::sample) {
      ++samples;
      EXPECT_GT(sample_rss(e), 1u << 20);
      EXPECT_GT(sample_heap_reserved(e), 0u);
    }
  EXPECT_GE(samples, 1);
}

// Event times come from the TSC where it is invariant, converted by the
// writer: they must agree with the trace clock (CLOCK_MONOTONIC since start)
// read around each record call, within the calibration's error.
TEST_F(RecorderTest, EventTimesAgreeWithTheTraceClock) {
  ASSERT_TRUE(start(quiet_options(path)));
  std::vector<std::pair<std::uint64_t, std::uint64_t>> windows;
  for (int i = 0; i < 5; ++i) {
    std::uint64_t before = detail::trace_time_ns();
    record_mark("tick");
    std::uint64_t after = detail::trace_time_ns();
    windows.emplace_back(before, after);
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
  }
  stop();
  Collected c;
  ASSERT_TRUE(test::read_trace(path, c).ok);
  ASSERT_EQ(c.events.size(), 5u);
  constexpr std::uint64_t kSlackNs = 200'000;  // calibration over the first ms
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_GE(c.events[i].time_ns + kSlackNs, windows[i].first) << i;
    EXPECT_LE(c.events[i].time_ns, windows[i].second + kSlackNs) << i;
    if (i) {
      EXPECT_GT(c.events[i].time_ns, c.events[i - 1].time_ns) << i;
    }
  }
}

TEST_F(RecorderTest, InternalGuardDropsEvents) {
  ASSERT_TRUE(start(quiet_options(path)));
  {
    detail::ScopedInternal guard;
    EXPECT_TRUE(detail::thread_is_internal());
    record_mark("dropped");
  }
  EXPECT_FALSE(detail::thread_is_internal());
  record_mark("kept");
  stop();
  Collected c;
  ASSERT_TRUE(test::read_trace(path, c).ok);
  ASSERT_EQ(c.events.size(), 1u);
}

TEST_F(RecorderTest, StartFailsWithOneLineForAnUnwritablePath) {
  testing::internal::CaptureStderr();
  EXPECT_FALSE(start("/nonexistent-dir/x.mtr"));
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("/nonexistent-dir/x.mtr"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1);
  EXPECT_FALSE(tracing());
}

TEST(RecorderOptionsTest, FromEnvironmentReadsKnownAndWarnsAboutUnknown) {
  setenv("MEMTRAIL_OUTPUT", "/tmp/x-%p.mtr", 1);
  setenv("MEMTRAIL_STACKS", "0", 1);
  setenv("MEMTRAIL_STACK_DEPTH", "12", 1);
  setenv("MEMTRAIL_SAMPLE_MS", "0", 1);
  setenv("MEMTRAIL_FLUSH_MS", "250", 1);
  setenv("MEMTRAIL_TRACK_LIVE_HEAP", "1", 1);
  setenv("MEMTRAIL_STAKCS", "1", 1);
  testing::internal::CaptureStderr();
  RecorderOptions o = RecorderOptions::from_environment();
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(o.output, "/tmp/x-%p.mtr");
  EXPECT_FALSE(o.stacks);
  EXPECT_EQ(o.stack_depth, 12);
  EXPECT_EQ(o.sample_interval_ms, 0u);
  EXPECT_EQ(o.flush_interval_ms, 250u);
  EXPECT_TRUE(o.track_live_heap);
  EXPECT_EQ(err, "memtrail: unknown environment variable MEMTRAIL_STAKCS (ignored)\n");

  detail::add_known_environment_variable("MEMTRAIL_STAKCS");
  setenv("MEMTRAIL_STACK_DEPTH", "lots", 1);
  testing::internal::CaptureStderr();
  o = RecorderOptions::from_environment();
  err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(o.stack_depth, 64);
  EXPECT_EQ(err, "memtrail: MEMTRAIL_STACK_DEPTH=lots is not a number in 0..256; using 64\n");
  for (const char* n :
       {"MEMTRAIL_OUTPUT", "MEMTRAIL_STACKS", "MEMTRAIL_STACK_DEPTH", "MEMTRAIL_SAMPLE_MS",
        "MEMTRAIL_FLUSH_MS", "MEMTRAIL_TRACK_LIVE_HEAP", "MEMTRAIL_STAKCS"})
    unsetenv(n);
}

TEST(RecorderOptionsTest, AddressModelFromEnvironment) {
  using detail::AddressModel;
  unsetenv("MEMTRAIL_ADDRESS_MODEL");
  EXPECT_EQ(detail::address_model_from_environment(), AddressModel::automatic);
  for (auto [value, want] :
       {std::pair{"auto", AddressModel::automatic}, std::pair{"1", AddressModel::always},
        std::pair{"0", AddressModel::never}}) {
    setenv("MEMTRAIL_ADDRESS_MODEL", value, 1);
    testing::internal::CaptureStderr();
    EXPECT_EQ(detail::address_model_from_environment(), want) << value;
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "") << value;
  }
  // A known variable: no "unknown environment variable" warning.
  testing::internal::CaptureStderr();
  RecorderOptions::from_environment();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  setenv("MEMTRAIL_ADDRESS_MODEL", "sometimes", 1);
  testing::internal::CaptureStderr();
  EXPECT_EQ(detail::address_model_from_environment(), AddressModel::automatic);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "memtrail: MEMTRAIL_ADDRESS_MODEL=sometimes is not 0, 1 or auto; using auto\n");
  unsetenv("MEMTRAIL_ADDRESS_MODEL");
}

}  // namespace
}  // namespace memtrail
