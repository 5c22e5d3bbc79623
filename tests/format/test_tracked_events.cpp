// TraceWriter::add_tracked_event: a caller that keeps one pool's live blocks
// itself (the recorder's live-heap map, holding each block's BlockRef) must
// get exactly the file add_event() writes with the writer's own table.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "memtrail/trace_file.hpp"
#include "trace_collector.hpp"

namespace memtrail {
namespace {

constexpr std::uint32_t kTrackedPool = 1;

// Two threads, two pools, several chunks: allocs and frees of the same few
// hundred addresses (frees of blocks allocated in this chunk, an earlier
// chunk or never), lost frees (an alloc over a live block), reuse events,
// failed allocs at address 0 and events that are neither.
std::vector<Event> mixed_events(unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<Event> v;
  std::uint64_t t = 1000;
  for (int i = 0; i < 60000; ++i) {
    std::uint64_t r = rng();
    Event e;
    e.time_ns = t += 1 + r % 50;
    e.thread = 1 + static_cast<std::uint32_t>((r >> 8) % 2);
    e.pool = (r >> 10) % 4 == 0 ? 2 : kTrackedPool;
    e.stack = 1 + static_cast<std::uint32_t>((r >> 12) % 3);
    e.address = 0x7f00'0000'0000ull + 16 * ((r >> 16) % 400);
    e.size = 8 + (r >> 32) % 3000;
    switch ((r >> 48) % 16) {
      case 0:
        e.kind = EventKind::reuse;
        break;
      case 1:
        e.kind = EventKind::alloc;
        e.address = 0;  // failed
        e.size = 0;
        break;
      case 2:
        e.kind = EventKind::sample;
        e.address = 1 << 20;
        break;
      default:
        e.kind = (r >> 52) % 2 ? EventKind::alloc : EventKind::free;
    }
    if (e.kind == EventKind::free) e.size = (r >> 56) % 2 ? 0 : e.size;
    e.requested = e.kind == EventKind::free ? 0 : e.size;
    v.push_back(e);
  }
  return v;
}

struct TrackedEvents : ::testing::Test {
  test::TempFile plain_file{"untracked.mtr"}, tracked_file{"tracked.mtr"};
  const std::string& plain = plain_file.path;
  const std::string& tracked = tracked_file.path;

  // with_refs: the caller's map of the tracked pool's live blocks.
  void write(const std::string& path, const std::vector<Event>& events, bool with_refs,
             bool model) {
    TraceWriter w(path, TraceHeader{});
    w.set_address_model(model);
    w.add_thread({1, 1, "a"});
    w.add_thread({2, 2, "b"});
    w.add_pool({kTrackedPool, 0, "malloc", PoolKind::heap, MemorySpace::host, -1});
    w.add_pool({2, 0, "other", PoolKind::caching, MemorySpace::host, -1});
    for (std::uint32_t s = 1; s <= 3; ++s) w.add_stack_node({s, 0, 0x400u * s});
    struct Block {
      TraceWriter::BlockRef ref;
      std::uint64_t size;
    };
    std::unordered_map<std::uint64_t, Block> live;
    for (std::size_t i = 0; i < events.size(); ++i) {
      const Event& e = events[i];
      if (i % 7000 == 6999) w.flush();  // chunks also end by size
      if (!with_refs || e.pool != kTrackedPool ||
          (e.kind != EventKind::alloc && e.kind != EventKind::reuse && e.kind != EventKind::free)) {
        w.add_event(e);
      } else if (e.kind == EventKind::free) {
        Block b{};
        if (auto it = live.find(e.address); it != live.end()) {
          b = it->second;
          live.erase(it);
        }
        w.add_tracked_event(e, b.ref, b.size);
      } else if (e.address != 0) {
        Block& b = live[e.address];  // replaces a block whose free was lost
        b.size = e.size;
        w.add_tracked_event(e, b.ref, b.size);
      } else {
        TraceWriter::BlockRef none;
        w.add_tracked_event(e, none, 0);
      }
    }
    w.finish();
  }
};

std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST_F(TrackedEvents, TrackedPoolWritesTheSameFileAsTheWritersOwnTable) {
  for (unsigned seed = 1; seed <= 3; ++seed) {
    for (bool model : {false, true}) {
      std::vector<Event> events = mixed_events(seed);
      write(plain, events, false, model);
      write(tracked, events, true, model);
      std::string a = contents(plain), b = contents(tracked);
      ASSERT_GT(a.size(), 1000u);
      EXPECT_TRUE(a == b) << "seed " << seed << " model " << model << ": " << a.size() << " vs "
                          << b.size() << " bytes";
      test::Collected c;
      ReadResult r = test::read_trace(tracked, c);
      ASSERT_TRUE(r.ok) << r.error;
      ASSERT_EQ(c.events.size(), events.size());
      for (std::size_t i = 0; i < events.size(); ++i) ASSERT_EQ(c.events[i], events[i]) << i;
    }
  }
}

}  // namespace
}  // namespace memtrail
