// CachingPool behaviour beyond the single-stream model: streams and
// record_stream, the retry order before OOM, oversize release, garbage
// collection, free callbacks, expandable segments, snapshots, pmr use.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <memory_resource>
#include <thread>
#include <vector>

#include "memtrail/alloc/caching_pool.hpp"
#include "memtrail/alloc/capacity_resource.hpp"
#include "memtrail/alloc/host_resources.hpp"
#include "memtrail/alloc/virtual_resource.hpp"

namespace {

using namespace memtrail::alloc;
constexpr std::uint64_t kMiB = 1ull << 20;

std::int64_t stat(const CachingPool& pool, const std::string& key) {
  return pool.memory_stats().at(key);
}

TEST(CachingPool, StreamsNeverShareCachedBlocks) {
  VirtualResource device;
  CachingPool pool(device, CachingConfig{});
  void* a = pool.malloc(1000, 1);
  pool.free(a);
  void* b = pool.malloc(1000, 2);
  EXPECT_NE(a, b);
  EXPECT_EQ(stat(pool, "segment.all.current"), 2);
  void* c = pool.malloc(1000, 1);
  EXPECT_EQ(a, c);  // same stream: the cached block comes back
  EXPECT_EQ(stat(pool, "segment.all.current"), 2);
}

TEST(CachingPool, RecordStreamDefersTheFreeUntilThatStreamSynchronizes) {
  VirtualResource device;
  CachingPool pool(device, CachingConfig{});
  void* a = pool.malloc(1000);
  pool.record_stream(a, 5);
  pool.record_stream(a, 0);  // the allocation stream needs no event
  pool.free(a);
  EXPECT_EQ(stat(pool, "allocation.all.current"), 0);
  EXPECT_EQ(stat(pool, "active.all.current"), 1);  // awaiting its event
  EXPECT_EQ(stat(pool, "active_bytes.all.current"), 1024);
  auto snap = pool.snapshot();
  ASSERT_EQ(snap.segments.size(), 1u);
  EXPECT_EQ(snap.segments[0].blocks[0].state, BlockState::State::active_awaiting_free);

  void* b = pool.malloc(1000);  // a's block is not back yet
  EXPECT_NE(a, b);
  pool.synchronize_stream(5);
  EXPECT_EQ(stat(pool, "active.all.current"), 2);  // processed at the next malloc, not before
  void* c = pool.malloc(1000);
  EXPECT_EQ(c, a);  // freed by process_events, then best fit
  EXPECT_EQ(stat(pool, "active.all.current"), 2);
  EXPECT_EQ(stat(pool, "num_sync_all_streams"), 0);
}

TEST(CachingPool, EmptyCacheSynchronizesOutstandingEvents) {
  VirtualResource device;
  CachingPool pool(device, CachingConfig{});
  void* a = pool.malloc(5 * kMiB);
  pool.record_stream(a, 3);
  pool.free(a);
  EXPECT_EQ(stat(pool, "reserved_bytes.all.current"), static_cast<std::int64_t>(20 * kMiB));
  pool.empty_cache();
  EXPECT_EQ(stat(pool, "num_sync_all_streams"), 1);
  EXPECT_EQ(stat(pool, "active.all.current"), 0);
  EXPECT_EQ(stat(pool, "reserved_bytes.all.current"), 0);
  EXPECT_EQ(stat(pool, "num_device_free"), 1);
}

TEST(CachingPool, RetryReleasesCachedSegmentsThenSucceeds) {
  VirtualResource device(64 * kMiB);
  CachingPool pool(device, CachingConfig{});
  pool.free(pool.malloc(40 * kMiB));
  void* b = pool.malloc(50 * kMiB);  // 40 cached + 50 > 64: release all cached, retry
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(stat(pool, "num_alloc_retries"), 1);
  EXPECT_EQ(stat(pool, "num_device_free"), 1);
  EXPECT_EQ(stat(pool, "reserved_bytes.all.current"), static_cast<std::int64_t>(50 * kMiB));
  EXPECT_EQ(stat(pool, "num_ooms"), 0);
}

TEST(CachingPool, MaxSplitReleasesOversizeBlocksBeforeTheFullRetry) {
  VirtualResource device(50 * kMiB);
  CachingPool pool(device, CachingConfig::parse("max_split_size_mb:20"));
  pool.free(pool.malloc(40 * kMiB));  // a cached oversize block
  pool.malloc(1000);                  // a 2 MiB small segment stays
  EXPECT_EQ(stat(pool, "oversize_segments.current"), 1);
  void* b = pool.malloc(18 * kMiB);  // may not take the oversize block; 42 + 18 > 50
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(stat(pool, "num_alloc_retries"), 0);  // release_available_cached_blocks was enough
  EXPECT_EQ(stat(pool, "num_device_free"), 1);
  EXPECT_EQ(stat(pool, "oversize_segments.current"), 0);
  EXPECT_EQ(stat(pool, "reserved_bytes.all.current"), static_cast<std::int64_t>(20 * kMiB));
}

TEST(CachingPool, OomObserverAndCounters) {
  VirtualResource device(64 * kMiB);
  CachingPool pool(device, CachingConfig{});
  void* a = pool.malloc(40 * kMiB);
  std::vector<std::uint64_t> seen;
  pool.attach_oom_observer(
      [&](int dev, std::uint64_t size, std::uint64_t total, std::uint64_t free) {
        seen = {static_cast<std::uint64_t>(dev), size, total, free};
      });
  EXPECT_THROW(pool.malloc(30 * kMiB), OutOfMemoryError);
  EXPECT_EQ(seen, (std::vector<std::uint64_t>{0, 30 * kMiB, 64 * kMiB, 24 * kMiB}));
  EXPECT_EQ(stat(pool, "num_ooms"), 1);
  EXPECT_EQ(stat(pool, "num_alloc_retries"), 1);
  pool.set_memory_fraction(0.5);
  EXPECT_THROW(pool.malloc(1000), OutOfMemoryError);  // 40 + 2 > 32 allowed
  EXPECT_EQ(seen, (std::vector<std::uint64_t>{0, 2 * kMiB, 32 * kMiB, 24 * kMiB}));
  pool.free(a);
}

TEST(CachingPool, GarbageCollectionFreesOldCachedBlocksAboveTheThreshold) {
  VirtualResource device(100 * kMiB);
  CachingPool pool(device, CachingConfig::parse("garbage_collection_threshold:0.5"));
  pool.set_memory_fraction(1.0);
  pool.free(pool.malloc(20 * kMiB));  // age 3 when d asks
  pool.free(pool.malloc(30 * kMiB));  // age 2
  pool.free(pool.malloc(40 * kMiB));  // age 1
  EXPECT_EQ(stat(pool, "reserved_bytes.all.current"), static_cast<std::int64_t>(90 * kMiB));
  // 90 MiB reserved > 50 MiB threshold: blocks at least as old as the
  // average (2) go: 20 and 30 MiB, which reclaims the 40 MiB GC aims for.
  void* d = pool.malloc(45 * kMiB);  // a 46 MiB segment (2 MiB rounding)
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(stat(pool, "num_device_free"), 2);
  EXPECT_EQ(stat(pool, "reserved_bytes.all.current"), static_cast<std::int64_t>(86 * kMiB));
  EXPECT_EQ(stat(pool, "num_alloc_retries"), 0);
}

TEST(CachingPool, FreeMemoryCallbacksRunBeforeANewSegment) {
  VirtualResource device;
  CachingPool pool(device, CachingConfig{});
  void* held = pool.malloc(30 * kMiB);
  int calls = 0;
  pool.add_free_memory_callback([&] {
    ++calls;
    if (!held) return false;
    pool.free(held);
    held = nullptr;
    return true;
  });
  void* b = pool.malloc(30 * kMiB);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(stat(pool, "num_device_alloc"), 1);  // served from the freed block
  pool.free(b);
}

TEST(CachingPool, ExpandableSegmentsMapPagesOnDemand) {
  VirtualResource device(1ull << 30);
  CachingPool pool(device, CachingConfig::parse("expandable_segments:True"));
  void* a = pool.malloc(30 * kMiB);  // two 20 MiB pages
  EXPECT_EQ(stat(pool, "reserved_bytes.all.current"), static_cast<std::int64_t>(40 * kMiB));
  EXPECT_EQ(stat(pool, "num_device_alloc"), 1);
  void* b = pool.malloc(5 * kMiB);  // fits in the mapped remainder
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b), reinterpret_cast<std::uintptr_t>(a) + 30 * kMiB);
  EXPECT_EQ(stat(pool, "reserved_bytes.all.current"), static_cast<std::int64_t>(40 * kMiB));
  void* c = pool.malloc(12 * kMiB);  // 5 MiB left: maps one more page, contiguous
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(c), reinterpret_cast<std::uintptr_t>(b) + 5 * kMiB);
  EXPECT_EQ(stat(pool, "reserved_bytes.all.current"), static_cast<std::int64_t>(60 * kMiB));
  EXPECT_EQ(stat(pool, "inactive_split.all.current"), 0);  // not tracked for expandable
  EXPECT_EQ(stat(pool, "segment.all.current"), 0);
  pool.free(b);
  pool.empty_cache();  // only whole free pages can go: none here
  EXPECT_EQ(stat(pool, "reserved_bytes.all.current"), static_cast<std::int64_t>(60 * kMiB));
  pool.free(a);
  pool.free(c);
  pool.empty_cache();
  EXPECT_EQ(stat(pool, "reserved_bytes.all.current"), 0);
  EXPECT_EQ(device.bytes_in_use(), 0u);
}

TEST(CachingPool, ExpandableSegmentsOnHostMemoryAreRealMemory) {
  MmapResource host;
  CapacityLimitedResource device(host, 256 * kMiB, "host device", memtrail::MemorySpace::host);
  CachingPool pool(device, CachingConfig::parse("expandable_segments:True"));
  auto* p = static_cast<unsigned char*>(pool.malloc(25 * kMiB));
  std::memset(p, 0xab, 25 * kMiB);
  EXPECT_EQ(p[25 * kMiB - 1], 0xab);
  EXPECT_EQ(device.bytes_in_use(), 40 * kMiB);
  EXPECT_THROW(pool.malloc(250 * kMiB), OutOfMemoryError);  // 40 + 260 > 256
  pool.free(p);
  pool.empty_cache();
  EXPECT_EQ(device.bytes_in_use(), 0u);
}

TEST(CachingPool, WorksAsAPmrResourceOnTheHeap) {
  SystemHeapResource heap;
  CachingPool pool(heap, CachingConfig{});
  {
    std::pmr::vector<int> v(&pool);
    for (int i = 0; i < 100000; ++i) v.push_back(i);
    EXPECT_EQ(v[99999], 99999);
    EXPECT_GT(stat(pool, "allocated_bytes.all.current"), 400000);
  }
  EXPECT_EQ(stat(pool, "allocated_bytes.all.current"), 0);
  EXPECT_GT(heap.bytes_in_use(), 0u);  // cached
  pool.empty_cache();
  EXPECT_EQ(heap.bytes_in_use(), 0u);
}

TEST(CachingPool, SnapshotShowsSegmentsAndBlocks) {
  VirtualResource device;
  CachingPool pool(device, CachingConfig{});
  void* a = pool.malloc(1000);
  void* b = pool.malloc(3 * kMiB);
  void* c = pool.malloc(12 * kMiB);
  pool.free(b);
  auto snap = pool.snapshot();
  ASSERT_EQ(snap.segments.size(), 2u);
  const SegmentState& small = snap.segments[0];
  EXPECT_EQ(small.address, VirtualResource::kFirstAddress);
  EXPECT_EQ(small.segment_type, "small");
  EXPECT_EQ(small.total_size, 2 * kMiB);
  EXPECT_EQ(small.allocated_size, 1024u);
  EXPECT_EQ(small.requested_size, 1000u);
  const SegmentState& large = snap.segments[1];
  EXPECT_EQ(large.address, VirtualResource::kFirstAddress + VirtualResource::kStride);
  ASSERT_EQ(large.blocks.size(), 3u);
  EXPECT_EQ(large.blocks[0].state, BlockState::State::inactive);  // b
  EXPECT_EQ(large.blocks[0].size, 3 * kMiB);
  EXPECT_EQ(large.blocks[1].state, BlockState::State::active_allocated);  // c
  EXPECT_EQ(large.blocks[2].size, 5 * kMiB);
  EXPECT_EQ(large.allocated_size, 12 * kMiB);
  pool.free(a);
  pool.free(c);
}

TEST(CachingPool, PeakAndAccumulatedResets) {
  VirtualResource device;
  CachingPool pool(device, CachingConfig{});
  void* a = pool.malloc(3 * kMiB);
  pool.free(pool.malloc(5 * kMiB));
  EXPECT_EQ(stat(pool, "allocated_bytes.all.peak"), static_cast<std::int64_t>(8 * kMiB));
  pool.reset_peak_memory_stats();
  EXPECT_EQ(stat(pool, "allocated_bytes.all.peak"), static_cast<std::int64_t>(3 * kMiB));
  EXPECT_EQ(stat(pool, "allocation.all.allocated"), 2);
  pool.reset_accumulated_memory_stats();
  EXPECT_EQ(stat(pool, "allocation.all.allocated"), 0);
  EXPECT_EQ(stat(pool, "allocation.all.current"), 1);
  EXPECT_EQ(stat(pool, "num_device_alloc"), 0);
  pool.free(a);
}

TEST(CachingPool, ThreadsShareOnePool) {
  VirtualResource device;
  CachingPool pool(device, CachingConfig{});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&pool, t] {
      std::vector<void*> mine;
      for (int i = 0; i < 2000; ++i) {
        mine.push_back(pool.malloc(static_cast<std::uint64_t>(512 * (1 + (i + t) % 3000)), t % 2));
        if (i % 3 == 2) {
          pool.free(mine.front());
          mine.erase(mine.begin());
        }
      }
      for (void* p : mine) pool.free(p);
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(stat(pool, "allocation.all.current"), 0);
  EXPECT_EQ(stat(pool, "allocation.all.allocated"), 8000);
  EXPECT_EQ(stat(pool, "active_bytes.all.current"), 0);
  pool.empty_cache();
  EXPECT_EQ(stat(pool, "reserved_bytes.all.current"), 0);
}

TEST(CachingPool, ForeignPointersAreRejected) {
  VirtualResource device;
  CachingPool pool(device, CachingConfig{});
  int x = 0;
  EXPECT_THROW(pool.free(&x), std::invalid_argument);
  EXPECT_EQ(pool.malloc(0), nullptr);
  pool.free(nullptr);
  EXPECT_EQ(stat(pool, "allocation.all.allocated"), 0);
}

TEST(CachingPool, ExpandableNeedsAnUpstreamThatReservesAddressSpace) {
  char path[] = "/tmp/memtrail-file-XXXXXX";
  int fd = mkstemp(path);
  ::close(fd);
  FileMmapResource file(path);
  EXPECT_THROW(CachingPool(file, CachingConfig::parse("expandable_segments:True")), ConfigError);
  ::unlink(path);
}

}  // namespace

// active / active_bytes equal allocation / allocated_bytes until a free is
// deferred by a stream event, and "all" is the sum of the two pools: every
// field (current, peak, allocated, freed), through the first deferral and
// the peak / accumulated resets, against values worked out by hand.
TEST(CachingPool, ActiveAndAggregateStatsThroughDeferredFreesAndResets) {
  VirtualResource device;
  CachingPool pool(device, CachingConfig{});
  auto four = [&](const std::string& name) {
    return std::vector<std::int64_t>{stat(pool, name + ".current"), stat(pool, name + ".peak"),
                                     stat(pool, name + ".allocated"), stat(pool, name + ".freed")};
  };
  using V = std::vector<std::int64_t>;
  void* a = pool.malloc(1000);  // 1024 B
  void* b = pool.malloc(3000);  // 3072 B
  pool.free(b);
  EXPECT_EQ(four("allocation.all"), (V{1, 2, 2, 1}));
  EXPECT_EQ(four("active.all"), (V{1, 2, 2, 1}));
  EXPECT_EQ(four("active_bytes.all"), (V{1024, 4096, 4096, 3072}));

  pool.record_stream(a, 5);
  pool.free(a);  // deferred: allocation drops now, active when the event completes
  EXPECT_EQ(four("allocation.all"), (V{0, 2, 2, 2}));
  EXPECT_EQ(four("active.all"), (V{1, 2, 2, 1}));
  EXPECT_EQ(four("allocated_bytes.all"), (V{0, 4096, 4096, 4096}));
  EXPECT_EQ(four("active_bytes.all"), (V{1024, 4096, 4096, 3072}));

  pool.synchronize_stream(5);
  void* c = pool.malloc(1000);  // processes a's event, then takes its block again
  EXPECT_EQ(c, a);
  EXPECT_EQ(four("allocation.all"), (V{1, 2, 3, 2}));
  EXPECT_EQ(four("active.all"), (V{1, 2, 3, 2}));
  EXPECT_EQ(four("active_bytes.all"), (V{1024, 4096, 5120, 4096}));
  EXPECT_EQ(four("active_bytes.small_pool"), four("active_bytes.all"));
  EXPECT_EQ(four("active_bytes.large_pool"), (V{0, 0, 0, 0}));

  void* big = pool.malloc(2 << 20);  // large pool: "all" now sums both
  EXPECT_EQ(four("allocated_bytes.all"),
            (V{1024 + (2 << 20), 1024 + (2 << 20), 5120 + (2 << 20), 4096}));
  pool.free(big);
  EXPECT_EQ(four("allocated_bytes.all"),
            (V{1024, 1024 + (2 << 20), 5120 + (2 << 20), 4096 + (2 << 20)}));
  EXPECT_EQ(four("allocated_bytes.large_pool"), (V{0, 2 << 20, 2 << 20, 2 << 20}));

  pool.reset_peak_memory_stats();
  EXPECT_EQ(four("active.all"), (V{1, 1, 4, 3}));
  EXPECT_EQ(four("allocated_bytes.all"), (V{1024, 1024, 5120 + (2 << 20), 4096 + (2 << 20)}));
  pool.reset_accumulated_memory_stats();
  EXPECT_EQ(four("active.all"), (V{1, 1, 0, 0}));
  EXPECT_EQ(four("allocation.all"), (V{1, 1, 0, 0}));
  pool.free(c);
  EXPECT_EQ(four("active.all"), (V{0, 1, 0, 1}));
}
