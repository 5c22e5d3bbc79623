// The pools' pending undo (docs/allocators.md): a free of the block just
// handed out is deferred, and cancelled by a malloc of the same rounded size
// on the same stream; every other call must first do the deferred free. Each
// test compares the pool with what the free done at once gives: a reference
// pool fed the same calls with a stats read after each one (a read ends any
// pending undo, so the reference never defers), or the numbers themselves.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "memtrail/alloc/bfc_pool.hpp"
#include "memtrail/alloc/caching_pool.hpp"
#include "memtrail/alloc/virtual_resource.hpp"
#include "memtrail/recorder.hpp"
#include "memtrail/trace_file.hpp"
#include "pool_recording.hpp"
#include "test_util.hpp"

namespace {

using namespace memtrail::alloc;
constexpr std::uint64_t kMiB = 1ull << 20;

std::uintptr_t addr(void* p) {
  return reinterpret_cast<std::uintptr_t>(p);
}

std::string blocks(const PoolSnapshot& snap) {
  std::string out;
  for (const auto& s : snap.segments) {
    out += "[" + std::to_string(s.address) + ":";
    for (const auto& b : s.blocks)
      out += " " + std::to_string(b.address) + "/" + std::to_string(b.size) + "/" +
             std::to_string(static_cast<int>(b.state)) + "/" + std::to_string(b.requested_size);
    out += "]";
  }
  return out;
}

// The keys whose values differ, "key: a vs b".
std::string differences(const std::map<std::string, std::int64_t>& a,
                        const std::map<std::string, std::int64_t>& b) {
  std::string out;
  for (const auto& [k, v] : a)
    if (!b.count(k) || b.at(k) != v)
      out += k + ": " + std::to_string(v) + " vs " +
             (b.count(k) ? std::to_string(b.at(k)) : std::string("-")) + "; ";
  return out;
}

// --- CachingPool ---

TEST(PendingUndo, CachingEmptyCacheReleasesTheWholeSegment) {
  VirtualResource device(64 * kMiB);
  CachingPool pool(device, CachingConfig{});
  void* p = pool.malloc(64);  // a 512 B block split off a new 2 MiB segment
  pool.free(p);               // merged back: the segment is wholly free
  pool.empty_cache();
  EXPECT_EQ(pool.reserved_bytes(), 0u);
  EXPECT_EQ(device.bytes_in_use(), 0u);
  const auto stats = pool.memory_stats();
  EXPECT_EQ(stats.at("segment.all.current"), 0);
  EXPECT_EQ(stats.at("inactive_split.all.current"), 0);
  EXPECT_EQ(stats.at("num_device_free"), 1);
}

TEST(PendingUndo, CachingStatsWhilePendingAreTheMergedState) {
  VirtualResource device(64 * kMiB);
  CachingPool pool(device, CachingConfig{});
  void* keep = pool.malloc(4096);  // the segment stays split around the pair
  void* p = pool.malloc(64);
  pool.free(p);
  // These two read around the deferred free.
  EXPECT_EQ(pool.allocated_bytes(), 4096u);
  EXPECT_EQ(pool.reserved_bytes(), 2 * kMiB);
  const auto stats = pool.memory_stats();
  EXPECT_EQ(stats.at("allocated_bytes.all.current"), 4096);
  EXPECT_EQ(stats.at("allocation.all.current"), 1);
  EXPECT_EQ(stats.at("allocation.all.allocated"), 2);
  EXPECT_EQ(stats.at("allocation.all.freed"), 1);
  EXPECT_EQ(stats.at("requested_bytes.all.current"), 4096);
  // One inactive split block: everything after `keep`, p merged into it.
  EXPECT_EQ(stats.at("inactive_split.all.current"), 1);
  EXPECT_EQ(stats.at("inactive_split_bytes.all.current"),
            static_cast<std::int64_t>(2 * kMiB - 4096));
  EXPECT_EQ(pool.allocated_bytes(), 4096u);
  pool.free(keep);
}

TEST(PendingUndo, CachingADifferentSizePicksTheMergedBlock) {
  VirtualResource device(64 * kMiB);
  CachingPool pool(device, CachingConfig{});
  void* a = pool.malloc(64);
  pool.free(a);
  // The merged block starts at a: a 1 KiB request splits it there. Without
  // the merge the remainder, 512 B further, would be the only free block.
  void* b = pool.malloc(1024);
  EXPECT_EQ(b, a);
  pool.free(b);
  // Another stream has no cached block: a second segment.
  void* c = pool.malloc(64, 1);
  EXPECT_NE(addr(c) & ~(2 * kMiB - 1), addr(a) & ~(2 * kMiB - 1));
  EXPECT_EQ(pool.reserved_bytes(), 4 * kMiB);
  pool.free(c);
  // Same rounded size, other request: the same block, requested updated.
  void* d = pool.malloc(64);
  pool.free(d);
  void* e = pool.malloc(500);
  EXPECT_EQ(e, a);
  EXPECT_EQ(pool.memory_stats().at("requested_bytes.all.current"), 500);
  EXPECT_EQ(pool.memory_stats().at("requested_bytes.all.peak"), 1024);
  pool.free(e);
}

TEST(PendingUndo, CachingFreeOfTheNeighbourRunsTheDeferredFreeFirst) {
  VirtualResource device(64 * kMiB);
  CachingPool pool(device, CachingConfig{});
  void* a = pool.malloc(64);
  void* b = pool.malloc(64);
  EXPECT_EQ(addr(b), addr(a) + 512);
  pool.free(b);  // deferred
  pool.free(a);  // b's merge first, then a merges with the rest
  const auto stats = pool.memory_stats();
  EXPECT_EQ(stats.at("inactive_split.all.current"), 0);
  EXPECT_EQ(stats.at("allocated_bytes.all.current"), 0);
  pool.empty_cache();
  EXPECT_EQ(pool.reserved_bytes(), 0u);
}

TEST(PendingUndo, CachingDoubleFreeWhilePendingIsStillRejected) {
  VirtualResource device(64 * kMiB);
  CachingPool pool(device, CachingConfig{});
  void* p = pool.malloc(64);
  pool.free(p);
  EXPECT_THROW(pool.free(p), std::invalid_argument);
  EXPECT_EQ(pool.allocated_bytes(), 0u);
  EXPECT_EQ(pool.malloc(64), p);
}

TEST(PendingUndo, CachingRecordStreamAfterTheMallocEndsTheUndo) {
  VirtualResource device(64 * kMiB);
  CachingPool pool(device, CachingConfig{});
  void* p = pool.malloc(64);
  pool.record_stream(p, 1);
  pool.free(p);  // deferred by a stream event, not by the undo
  EXPECT_EQ(pool.memory_stats().at("active_bytes.all.current"), 512);
  void* q = pool.malloc(64);
  EXPECT_NE(q, p);  // p is not free yet
  pool.synchronize_stream(1);
  pool.free(q);
  void* r = pool.malloc(64);  // events are processed: p is free again
  EXPECT_EQ(r, p);
}

// The calls of a random run biased to the undo pattern: the block just
// handed out is freed 3 times in 4, and after a free the same size is asked
// again 3 times in 4. Sizes are 1..small_max (odds small_odds-1 in
// small_odds) or 1..large_max, a quarter of them moved to the same rounded
// size (`granule`) as another.
struct UndoBiasedRun {
  std::mt19937_64 rng;
  unsigned small_odds;
  std::uint64_t small_max, large_max, granule;
  std::uint64_t last_size = 64;
  bool just_alloc = false, just_free = false, was_alloc = false, was_free = false;
  unsigned r = 0;  // this call's draw, 0..99

  void next_call() {
    was_alloc = just_alloc;
    was_free = just_free;
    just_alloc = just_free = false;
    r = rng() % 100;
  }
  bool is_free(std::size_t live) const { return (was_alloc && r < 75) || (live != 0 && r >= 90); }
  std::size_t victim(std::size_t live) {
    just_free = true;
    return was_alloc && r < 75 ? live - 1 : rng() % live;
  }
  std::uint64_t size() {
    std::uint64_t n = last_size;
    if (!(was_free && r < 75))
      n = rng() % small_odds ? 1 + rng() % small_max : 1 + rng() % large_max;
    if (rng() % 4 == 0) n = (n + granule - 1) / granule * granule - rng() % granule;
    return n == 0 ? 1 : n;
  }
  void allocated(std::uint64_t n) {
    last_size = n;
    just_alloc = true;
  }
};

// Random calls biased to the undo pattern, against a reference that reads
// the stats after every call. Pointers, stats, snapshots and summaries must
// agree at every step.
void caching_against_reference(const char* conf, std::uint64_t seed) {
  SCOPED_TRACE(std::string("conf '") + conf + "' seed " + std::to_string(seed));
  VirtualResource dev_a(256 * kMiB), dev_b(256 * kMiB);
  CachingPool a(dev_a, CachingConfig::parse(conf)), b(dev_b, CachingConfig::parse(conf));
  UndoBiasedRun run{std::mt19937_64(seed), 2, 4096, 8 * kMiB, 512};
  std::mt19937_64& rng = run.rng;
  std::vector<std::pair<void*, void*>> live;  // (a's, b's)
  for (int i = 0; i < 3000; ++i) {
    run.next_call();
    if (run.is_free(live.size())) {
      const std::size_t k = run.victim(live.size());
      a.free(live[k].first);
      b.free(live[k].second);
      live[k] = live.back();
      live.pop_back();
    } else if (run.r < 97) {
      const std::uint64_t size = run.size();
      const StreamId stream = rng() % 10 == 0 ? 1 : 0;
      void *pa = nullptr, *pb = nullptr;
      bool oom_a = false, oom_b = false;
      try {
        pa = a.malloc(size, stream);
      } catch (const OutOfMemoryError&) {
        oom_a = true;
      }
      try {
        pb = b.malloc(size, stream);
      } catch (const OutOfMemoryError&) {
        oom_b = true;
      }
      ASSERT_EQ(oom_a, oom_b) << "call " << i;
      if (!oom_a) {
        ASSERT_EQ(pa, pb) << "call " << i;  // both devices number segments alike
        live.push_back({pa, pb});
        run.allocated(size);
      }
    } else if (run.r < 98) {
      a.empty_cache();
      b.empty_cache();
    } else {
      ASSERT_EQ(blocks(a.snapshot()), blocks(b.snapshot())) << "call " << i;
    }
    const auto sb = b.memory_stats();  // the reference: never pending
    if (rng() % 16 == 0 || i == 2999) {
      ASSERT_EQ(differences(a.memory_stats(), sb), "") << "call " << i;
      ASSERT_EQ(a.memory_summary(), b.memory_summary()) << "call " << i;
    }
  }
}

TEST(PendingUndo, CachingAgreesWithAPoolThatNeverDefers) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    caching_against_reference("", seed);
    caching_against_reference("max_split_size_mb:20", seed);
    caching_against_reference("expandable_segments:True", seed);
  }
}

// --- BfcPool ---

BfcOptions growth(std::uint64_t limit) {
  BfcOptions o;
  o.preallocate = false;
  o.memory_limit = limit;
  return o;
}

TEST(PendingUndo, BfcStatsWhilePendingAreTheCoalescedState) {
  VirtualResource device(64 * kMiB);
  BfcPool pool(device, growth(64 * kMiB));
  void* p = pool.allocate_raw(64);  // 256 B split off the first 2 MiB region
  pool.deallocate_raw(p);
  const BfcStats s = pool.stats();
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.num_allocs, 1);
  EXPECT_EQ(s.largest_free_block_bytes, static_cast<std::int64_t>(2 * kMiB));
  // stats() reads around the deferred free, which an allocation of the
  // same size may still undo.
  void* q = pool.allocate_raw(64);
  EXPECT_EQ(q, p);
  EXPECT_EQ(pool.stats().bytes_in_use, 256);
  EXPECT_EQ(pool.stats().largest_free_block_bytes, static_cast<std::int64_t>(2 * kMiB - 256));
  pool.deallocate_raw(q);
  const PoolSnapshot snap = pool.snapshot();
  ASSERT_EQ(snap.segments.size(), 1u);
  ASSERT_EQ(snap.segments[0].blocks.size(), 1u);  // one free chunk: coalesced
  EXPECT_EQ(snap.segments[0].blocks[0].size, 2 * kMiB);
  EXPECT_EQ(pool.stats().num_allocs, 2);
}

TEST(PendingUndo, BfcADifferentSizePicksTheCoalescedChunk) {
  VirtualResource device(64 * kMiB);
  BfcPool pool(device, growth(64 * kMiB));
  void* a = pool.allocate_raw(64);
  pool.deallocate_raw(a);
  void* b = pool.allocate_raw(1000);  // the coalesced chunk starts at a
  EXPECT_EQ(b, a);
  pool.deallocate_raw(b);
  void* c = pool.allocate_raw(200);  // same rounding as 64: the same chunk
  EXPECT_EQ(c, a);
  pool.deallocate_raw(c);
  void* d = pool.allocate_raw(200);
  EXPECT_EQ(pool.stats().num_allocs, 4);
  EXPECT_EQ(pool.stats().bytes_in_use, 256);
  EXPECT_EQ(pool.stats().peak_bytes_in_use, 1024);
  pool.deallocate_raw(d);
  EXPECT_THROW(pool.deallocate_raw(d), std::invalid_argument);
  EXPECT_EQ(pool.stats().bytes_in_use, 0);
}

TEST(PendingUndo, BfcResetPeakWhilePendingSeesTheFree) {
  VirtualResource device(64 * kMiB);
  BfcPool pool(device, growth(64 * kMiB));
  void* p = pool.allocate_raw(4096);
  pool.deallocate_raw(p);
  pool.reset_peak_stats();
  EXPECT_EQ(pool.stats().peak_bytes_in_use, 0);
  void* q = pool.allocate_raw(4096);
  EXPECT_EQ(q, p);
  EXPECT_EQ(pool.stats().peak_bytes_in_use, 4096);
  pool.deallocate_raw(q);
}

void bfc_against_reference(const BfcOptions& options, std::uint64_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  VirtualResource dev_a(256 * kMiB), dev_b(256 * kMiB);
  BfcPool a(dev_a, options), b(dev_b, options);
  UndoBiasedRun run{std::mt19937_64(seed), 3, 8192, 24 * kMiB, 256};
  std::mt19937_64& rng = run.rng;
  std::vector<std::pair<void*, void*>> live;
  for (int i = 0; i < 3000; ++i) {
    run.next_call();
    if (run.is_free(live.size())) {
      const std::size_t k = run.victim(live.size());
      a.deallocate_raw(live[k].first);
      b.deallocate_raw(live[k].second);
      live[k] = live.back();
      live.pop_back();
    } else {
      const std::uint64_t size = run.size();
      void *pa = nullptr, *pb = nullptr;
      try {
        pa = a.allocate_raw(size);
      } catch (const std::exception&) {
      }
      try {
        pb = b.allocate_raw(size);
      } catch (const std::exception&) {
      }
      ASSERT_EQ(pa == nullptr, pb == nullptr) << "call " << i;
      if (pa) {
        ASSERT_EQ(pa, pb) << "call " << i;
        live.push_back({pa, pb});
        run.allocated(size);
      }
    }
    const auto sb = b.stats().to_map();  // the reference: never pending
    if (rng() % 16 == 0 || i == 2999) {
      ASSERT_EQ(differences(a.stats().to_map(), sb), "") << "call " << i;
      ASSERT_EQ(a.region_count(), b.region_count()) << "call " << i;
      ASSERT_EQ(blocks(a.snapshot()), blocks(b.snapshot())) << "call " << i;
    }
  }
}

TEST(PendingUndo, BfcAgreesWithAPoolThatNeverDefers) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    bfc_against_reference(growth(200 * kMiB), seed);
    BfcOptions pre = growth(64 * kMiB);
    pre.preallocate = true;
    bfc_against_reference(pre, seed);
  }
}

// --- tracing: the events are those of the free done at once ---

struct Events final : memtrail::TraceVisitor {
  std::vector<memtrail::Event> events;
  void on_event(const memtrail::Event& e) override { events.push_back(e); }
};

TEST(PendingUndo, TracedPairsRecordEveryAllocReuseAndFree) {
  memtrail::test::TempDir dir;
  const std::string path = dir.path + "/undo.mtr";
  ASSERT_TRUE(memtrail::test::start_pool_recording(path));
  VirtualResource device(64 * kMiB);
  CachingPool caching(device, CachingConfig{}, "undo caching");
  BfcPool bfc(device, growth(16 * kMiB), "undo bfc");
  void* c1 = caching.malloc(64);
  caching.free(c1);
  void* c2 = caching.malloc(100);  // same rounding: the undo
  caching.free(c2);
  void* c3 = caching.malloc(2048);  // other size: the deferred free first
  caching.free(c3);
  void* b1 = bfc.allocate_raw(64);
  bfc.deallocate_raw(b1);
  void* b2 = bfc.allocate_raw(64);
  bfc.deallocate_raw(b2);
  memtrail::stop();
  EXPECT_EQ(c1, c2);
  EXPECT_EQ(c1, c3);
  EXPECT_EQ(b1, b2);

  memtrail::TraceReader reader(path);
  Events got;
  auto result = reader.read(got);
  ASSERT_TRUE(result.ok) << result.error;
  using K = memtrail::EventKind;
  auto of = [&](std::uint32_t pool) {
    std::vector<std::string> out;
    for (const auto& e : got.events)
      if (e.pool == pool && e.kind != K::segment_reserve && e.kind != K::segment_release)
        out.push_back(std::string(e.kind == K::alloc   ? "alloc"
                                  : e.kind == K::reuse ? "reuse"
                                  : e.kind == K::free  ? "free"
                                                       : "other") +
                      " " + std::to_string(e.address) + " " + std::to_string(e.size));
    return out;
  };
  const auto c = of(caching.pool_id());
  const std::string base = std::to_string(addr(c1));
  EXPECT_EQ(c, (std::vector<std::string>{"alloc " + base + " 512", "free " + base + " 512",
                                         "reuse " + base + " 512", "free " + base + " 512",
                                         "reuse " + base + " 2048", "free " + base + " 2048"}));
  const auto b = of(bfc.pool_id());
  const std::string bbase = std::to_string(addr(b1));
  EXPECT_EQ(b, (std::vector<std::string>{"alloc " + bbase + " 256", "free " + bbase + " 256",
                                         "reuse " + bbase + " 256", "free " + bbase + " 256"}));
}

}  // namespace
