// TraceWriter::end_thread: the recorder's writer drops an ended thread's
// encoder state at once (a program that starts and ends threads by the
// thousand kept ~70 KiB per thread of a chunk). The file must be exactly
// the one written without the calls, and an event of a thread after its
// end must still read back right.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "memtrail/trace_file.hpp"
#include "trace_collector.hpp"

namespace memtrail {
namespace {

struct Stream {
  std::vector<Event> events;
  // last_of[i]: events[i] is the last event of its thread.
  std::vector<bool> last_of;
};

// `threads` short-lived threads, `overlap` at a time, each making a few
// allocs and frees (some of blocks another thread allocated), beside
// thread 1, which lives throughout: more threads than kMaxThreadsPerChunk
// (1024) share a chunk, as under a program that churns threads.
Stream churning_threads(unsigned seed, std::uint32_t threads, std::uint32_t overlap) {
  std::mt19937_64 rng(seed);
  Stream s;
  std::vector<std::uint64_t> live;  // addresses, any thread's
  std::vector<std::uint32_t> running;
  std::vector<int> left(threads + 2, 0);
  std::uint32_t next_thread = 2;
  std::uint64_t t = 1000;
  while (next_thread < threads + 2 || !running.empty()) {
    while (running.size() < overlap && next_thread < threads + 2) {
      left[next_thread] = 1 + static_cast<int>(rng() % 8);
      running.push_back(next_thread++);
    }
    std::uint64_t r = rng();
    std::size_t pick = r % (running.size() + 1);
    std::uint32_t thread = pick == running.size() ? 1 : running[pick];
    Event e;
    e.time_ns = t += 1 + (r >> 8) % 40;
    e.thread = thread;
    e.pool = 1;
    e.stack = 1 + static_cast<std::uint32_t>((r >> 16) % 3);
    if (!live.empty() && (r >> 24) % 2) {
      std::size_t k = (r >> 32) % live.size();
      e.kind = EventKind::free;
      e.address = live[k];
      live[k] = live.back();
      live.pop_back();
    } else {
      e.kind = EventKind::alloc;
      e.address = 0x7f00'0000'0000ull + 16 * ((r >> 32) % 5000);
      e.size = e.requested = 8 + (r >> 48) % 2000;
      live.push_back(e.address);
    }
    s.events.push_back(e);
    bool last = thread != 1 && --left[thread] == 0;
    s.last_of.push_back(last);
    if (last) std::erase(running, thread);
  }
  return s;
}

void write(const std::string& path, const Stream& s, bool end_threads, bool model) {
  TraceWriter w(path, TraceHeader{});
  w.set_address_model(model);
  w.add_pool({1, 0, "malloc", PoolKind::heap, MemorySpace::host, -1});
  for (std::uint32_t n = 1; n <= 3; ++n) w.add_stack_node({n, 0, 0x400u * n});
  std::uint32_t announced = 0;
  for (std::size_t i = 0; i < s.events.size(); ++i) {
    const Event& e = s.events[i];
    for (; announced < e.thread; ++announced) w.add_thread({announced + 1, 1000 + announced, "t"});
    w.add_event(e);
    if (end_threads && s.last_of[i]) w.end_thread(e.thread);
  }
  w.finish();
}

std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void expect_reads_back(const std::string& path, const std::vector<Event>& events) {
  test::Collected c;
  ReadResult r = test::read_trace(path, c);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(c.events.size(), events.size());
  for (std::size_t i = 0; i < events.size(); ++i) ASSERT_EQ(c.events[i], events[i]) << i;
}

TEST(EndedThreads, DroppingTheirStateWritesTheSameFile) {
  test::TempFile kept{"kept.mtr"}, dropped{"dropped.mtr"};
  for (unsigned seed = 1; seed <= 2; ++seed) {
    for (bool model : {false, true}) {
      Stream s = churning_threads(seed, 3000, 16);
      write(kept.path, s, false, model);
      write(dropped.path, s, true, model);
      std::string a = contents(kept.path), b = contents(dropped.path);
      ASSERT_GT(a.size(), 1000u);
      EXPECT_TRUE(a == b) << "seed " << seed << " model " << model << ": " << a.size() << " vs "
                          << b.size() << " bytes";
      expect_reads_back(dropped.path, s.events);
    }
  }
}

// A thread said to have ended makes more events (its id back, as a wrong
// caller would): they start a new chunk, and the trace still reads right.
TEST(EndedThreads, AnEventAfterTheEndStillReadsBack) {
  test::TempFile file{"after_end.mtr"};
  Stream s = churning_threads(7, 200, 4);
  for (bool model : {false, true}) {
    TraceWriter w(file.path, TraceHeader{});
    w.set_address_model(model);
    w.add_pool({1, 0, "malloc", PoolKind::heap, MemorySpace::host, -1});
    for (std::uint32_t n = 1; n <= 3; ++n) w.add_stack_node({n, 0, 0x400u * n});
    for (std::uint32_t n = 1; n <= 201; ++n) w.add_thread({n, n, "t"});
    for (const Event& e : s.events) {
      w.add_event(e);
      w.end_thread(e.thread);  // every event is "the last" of its thread
    }
    w.finish();
    expect_reads_back(file.path, s.events);
  }
}

}  // namespace
}  // namespace memtrail
