// The CUDA callback handler driven with hand-filled CUPTI parameter structs
// (cupti.h's generated cu*_params), one test per allocation family, as the
// CUDA driver would fill them around each call.
#include <gtest/gtest.h>

#include "cuda_test_util.hpp"

namespace memtrail::cupti::test {
namespace {

class CudaTrackerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    queries.devices[fake_context(1)] = 0;
    queries.devices[fake_context(2)] = 1;
    tracker.set_memory_info_interval_ns(0);
  }
  EventSink sink;
  TableQueries queries;
  CudaTracker tracker{sink, queries};
};

TEST_F(CudaTrackerTest, DeviceAllocAndFreeV2) {
  CUdeviceptr ptr = 0x7f0000200000;
  cuMemAlloc_v2_params alloc{&ptr, 1000};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, alloc, fake_context(1));
  cuMemFree_v2_params free{ptr};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, free, fake_context(1));

  ASSERT_EQ(sink.events.size(), 2u);
  const Event& a = sink.events[0];
  EXPECT_EQ(a.kind, EventKind::alloc);
  EXPECT_EQ(a.address, 0x7f0000200000u);
  EXPECT_EQ(a.size, 1000u);
  EXPECT_EQ(a.requested, 1000u);
  EXPECT_TRUE(sink.with_stack[0]);
  const PoolInfo& pool = sink.pool(a);
  EXPECT_EQ(pool.name, "cuda:0 device");
  EXPECT_EQ(pool.kind, PoolKind::cuda);
  EXPECT_EQ(pool.space, MemorySpace::device);
  EXPECT_EQ(pool.device, 0);
  const Event& f = sink.events[1];
  EXPECT_EQ(f.kind, EventKind::free);
  EXPECT_EQ(f.pool, a.pool);
  EXPECT_EQ(f.address, a.address);
  EXPECT_EQ(f.size, 1000u);
  EXPECT_FALSE(sink.with_stack[1]);
  EXPECT_EQ(tracker.counts().live_blocks, 0u);
}

TEST_F(CudaTrackerTest, LegacyAllocAndPitchSizes) {
  CUdeviceptr_v1 small = 0x10000;
  cuMemAlloc_params legacy{&small, 256};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc, legacy, fake_context(2));
  CUdeviceptr pitched = 0x7f0000400000;
  size_t pitch = 512;  // the driver rounds each 500-byte row up to 512
  cuMemAllocPitch_v2_params p{&pitched, &pitch, 500, 4, 4};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2, p, fake_context(2));

  ASSERT_EQ(sink.events.size(), 2u);
  EXPECT_EQ(sink.events[0].size, 256u);
  EXPECT_EQ(sink.pool(sink.events[0]).name, "cuda:1 device");
  EXPECT_EQ(sink.events[1].address, 0x7f0000400000u);
  EXPECT_EQ(sink.events[1].size, 2048u);
  EXPECT_EQ(sink.events[1].requested, 2000u);
  EXPECT_EQ(sink.events[0].pool, sink.events[1].pool);
  EXPECT_EQ(sink.pools.size(), 1u);
}

TEST_F(CudaTrackerTest, PinnedHostFamily) {
  void* a = reinterpret_cast<void*>(0x200000000);
  void* b = reinterpret_cast<void*>(0x200100000);
  cuMemAllocHost_v2_params host{&a, 4096};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2, host, fake_context(2));
  cuMemHostAlloc_params hostalloc{&b, 8192, 0};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc, hostalloc, fake_context(1));
  cuMemFreeHost_params free{a};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost, free, fake_context(2));

  ASSERT_EQ(sink.events.size(), 3u);
  EXPECT_EQ(sink.pools.size(), 1u);  // one pinned pool, whatever the device
  EXPECT_EQ(sink.pools[0].name, "cuda pinned");
  EXPECT_EQ(sink.pools[0].space, MemorySpace::pinned);
  EXPECT_EQ(sink.pools[0].device, -1);
  EXPECT_EQ(sink.events[1].size, 8192u);
  EXPECT_EQ(sink.events[2].kind, EventKind::free);
  EXPECT_EQ(sink.events[2].address, 0x200000000u);
  EXPECT_EQ(sink.events[2].size, 4096u);
  EXPECT_EQ(tracker.counts().live_bytes, 8192u);
}

TEST_F(CudaTrackerTest, ManagedFreedByCuMemFree) {
  CUdeviceptr ptr = 0x7f1000000000;
  cuMemAllocManaged_params managed{&ptr, 1 << 20, CU_MEM_ATTACH_GLOBAL};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged, managed, fake_context(1));
  cuMemFree_v2_params free{ptr};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, free, fake_context(1));

  ASSERT_EQ(sink.events.size(), 2u);
  EXPECT_EQ(sink.pool(sink.events[0]).name, "cuda managed");
  EXPECT_EQ(sink.pool(sink.events[0]).space, MemorySpace::managed);
  EXPECT_EQ(sink.events[1].pool, sink.events[0].pool);  // cuMemFree, but the managed pool
  EXPECT_EQ(sink.events[1].size, 1u << 20);
}

TEST_F(CudaTrackerTest, StreamOrderedFamilyCarriesStreamIds) {
  queries.streams[fake_stream(1)] = 7;
  queries.streams[fake_stream(2)] = 9;
  CUdeviceptr a = 0x7f2000000000, b = 0x7f2000100000, c = 0x7f2000200000;
  cuMemAllocAsync_params async{&a, 300, fake_stream(1)};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync, async, fake_context(2));
  cuMemAllocAsync_ptsz_params ptsz{&b, 600, fake_stream(2)};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz, ptsz, fake_context(2));
  CUmemoryPool pool = reinterpret_cast<CUmemoryPool>(0x3000);
  cuMemAllocFromPoolAsync_params from_pool{&c, 900, pool, fake_stream(1)};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync, from_pool, fake_context(2));
  cuMemFreeAsync_params free{b, fake_stream(2)};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync, free, fake_context(2));

  ASSERT_EQ(sink.events.size(), 4u);
  EXPECT_EQ(sink.pool(sink.events[0]).name, "cuda:1 device");
  EXPECT_EQ(sink.events[0].aux, 7u);
  EXPECT_EQ(sink.events[1].aux, 9u);
  EXPECT_EQ(sink.events[2].aux, 7u);
  EXPECT_EQ(sink.events[2].size, 900u);
  EXPECT_EQ(sink.events[3].kind, EventKind::free);
  EXPECT_EQ(sink.events[3].address, b);
  EXPECT_EQ(sink.events[3].size, 600u);
  EXPECT_EQ(tracker.counts().live_bytes, 1200u);
}

// The stream-ordered pools' reserved bytes (RESERVED_MEM_CURRENT, summed
// over the device's current pool and the explicit pools used) are sampled
// with the other samples into "cuda:N stream-ordered" as segment changes,
// and all given back when the context goes.
TEST_F(CudaTrackerTest, StreamOrderedPoolsReserveIsSampledAsSegments) {
  CUmemoryPool own = reinterpret_cast<CUmemoryPool>(0x3000);
  queries.reserved[{1, nullptr}] = 4 << 20;  // the device's pool after the first alloc
  CUdeviceptr a = 0x7f2000000000, b = 0x7f2000100000;
  cuMemAllocAsync_params async{&a, 300, fake_stream(1)};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync, async, fake_context(2));
  queries.reserved[{1, own}] = 2 << 20;
  cuMemAllocFromPoolAsync_params from_pool{&b, 900, own, fake_stream(1)};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync, from_pool, fake_context(2));
  queries.reserved[{1, nullptr}] = 0;  // trimmed at a synchronization
  cuMemFreeAsync_params free{a, fake_stream(1)};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync, free, fake_context(2));
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync, free, fake_context(2));  // no change
  tracker.on_context_destroy(fake_context(2));

  std::vector<Event> segs;
  for (const Event& e : sink.events)
    if (e.kind == EventKind::segment_reserve || e.kind == EventKind::segment_release)
      segs.push_back(e);
  ASSERT_EQ(segs.size(), 4u);
  const std::uint64_t base = segs[0].address;
  EXPECT_EQ(sink.pool(segs[0]).name, "cuda:1 stream-ordered");
  EXPECT_EQ(sink.pool(segs[0]).kind, PoolKind::cuda);
  EXPECT_EQ(sink.pool(segs[0]).device, 1);
  EXPECT_EQ(segs[0].kind, EventKind::segment_reserve);  // 0 -> 4 MiB
  EXPECT_EQ(segs[0].size, 4u << 20);
  EXPECT_EQ(segs[1].kind, EventKind::segment_reserve);  // 4 -> 6 MiB
  EXPECT_EQ(segs[1].address, base + (4 << 20));
  EXPECT_EQ(segs[1].size, 2u << 20);
  EXPECT_EQ(segs[2].kind, EventKind::segment_release);  // 6 -> 2 MiB
  EXPECT_EQ(segs[2].address, base + (2 << 20));
  EXPECT_EQ(segs[2].size, 4u << 20);
  EXPECT_EQ(segs[3].kind, EventKind::segment_release);  // context destroyed: 2 -> 0
  EXPECT_EQ(segs[3].address, base);
  EXPECT_EQ(segs[3].size, 2u << 20);
  for (const Event& e : segs) EXPECT_EQ(e.pool, segs[0].pool);
  EXPECT_NE(sink.pool(segs[0]).id, 0u);
}

TEST_F(CudaTrackerTest, VirtualMemoryFamily) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 1;
  CUmemGenericAllocationHandle handle = 0xabc;
  cuMemCreate_params create{&handle, 2 << 20, &prop, 0};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemCreate, create, fake_context(2));
  cuMemMap_params map{0x7f3000000000, 2 << 20, 0, handle, 0};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemMap, map, fake_context(2));
  cuMemUnmap_params unmap{0x7f3000000000, 2 << 20};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemUnmap, unmap, fake_context(2));
  cuMemRelease_params release{handle};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemRelease, release, fake_context(2));

  ASSERT_EQ(sink.events.size(), 4u);
  EXPECT_EQ(sink.events[0].kind, EventKind::alloc);
  EXPECT_EQ(sink.pool(sink.events[0]).name, "cuda:1 vmm");
  EXPECT_EQ(sink.events[0].address, 0xabcu);
  EXPECT_EQ(sink.events[0].size, 2u << 20);
  EXPECT_EQ(sink.events[1].kind, EventKind::segment_reserve);
  EXPECT_EQ(sink.events[1].detail, static_cast<std::uint8_t>(SegmentDetail::map));
  EXPECT_EQ(sink.pool(sink.events[1]).name, "cuda:1 device");
  EXPECT_EQ(sink.events[2].kind, EventKind::segment_release);
  EXPECT_EQ(sink.events[2].size, 2u << 20);
  EXPECT_EQ(sink.events[3].kind, EventKind::free);
  EXPECT_EQ(sink.events[3].pool, sink.events[0].pool);
  EXPECT_EQ(tracker.counts().live_blocks, 0u);
}

TEST_F(CudaTrackerTest, OutOfMemoryBecomesAnOomEventNamingTheRuntimeApi) {
  queries.free = 1 << 20;
  queries.total = 80ull << 30;
  CUdeviceptr ptr = 0;
  cuMemAlloc_v2_params alloc{&ptr, 100ull << 30};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, alloc, fake_context(1),
        CUDA_ERROR_OUT_OF_MEMORY, "cudaMalloc_v3020");
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(sink.events[0].kind, EventKind::oom);
  EXPECT_EQ(sink.events[0].size, 100ull << 30);
  ASSERT_EQ(sink.events[0].aux, 1u);
  EXPECT_EQ(sink.strings[0],
            "{\"api\":\"cudaMalloc_v3020\",\"device\":0,\"free\":1048576,\"total\":85899345920}");
  EXPECT_EQ(tracker.counts().live_blocks, 0u);
}

TEST_F(CudaTrackerTest, OtherFailuresAndOtherCallsRecordNothing) {
  CUdeviceptr ptr = 0x1234;
  cuMemAlloc_v2_params alloc{&ptr, 64};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, alloc, fake_context(1),
        CUDA_ERROR_INVALID_VALUE);
  cuMemFree_v2_params unknown{0x9999};  // never allocated while tracing
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, unknown, fake_context(1));
  ApiCall launch;
  launch.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
  EXPECT_FALSE(tracker.on_driver_call(launch));
  EXPECT_TRUE(sink.events.empty());
  EXPECT_TRUE(sink.pools.empty());
}

TEST_F(CudaTrackerTest, BlocksLiveAtContextDestroyAreLeaksOfThatContextOnly) {
  CUdeviceptr a = 0x7f0000000000, b = 0x7f0000100000, c = 0x7f4000000000;
  cuMemAlloc_v2_params pa{&a, 1000}, pb{&b, 3000}, pc{&c, 5000};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, pa, fake_context(1));
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, pb, fake_context(1));
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, pc, fake_context(2));
  cuMemFree_v2_params fa{a};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, fa, fake_context(1));
  sink.events.clear();

  tracker.on_context_destroy(fake_context(1));
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(sink.events[0].kind, EventKind::reachability);
  EXPECT_EQ(sink.events[0].detail, static_cast<std::uint8_t>(LeakClass::direct));
  EXPECT_EQ(sink.events[0].address, b);
  EXPECT_EQ(sink.events[0].size, 3000u);
  EXPECT_EQ(sink.pool(sink.events[0]).name, "cuda:0 device");
  EXPECT_EQ(sink.flushes, 1);

  tracker.on_exit();
  ASSERT_EQ(sink.events.size(), 2u);
  EXPECT_EQ(sink.events[1].address, c);
  EXPECT_EQ(sink.pool(sink.events[1]).name, "cuda:1 device");
  auto counts = tracker.counts();
  EXPECT_EQ(counts.leaked_blocks, 2u);
  EXPECT_EQ(counts.leaked_bytes, 8000u);
  EXPECT_EQ(counts.live_blocks, 0u);
  tracker.on_exit();  // nothing left: nothing recorded twice
  EXPECT_EQ(sink.events.size(), 2u);
}

TEST_F(CudaTrackerTest, DeviceMemoryIsMeasuredForSamples) {
  queries.free = 70ull << 30;
  queries.total = 80ull << 30;
  CUdeviceptr ptr = 0x7f0000000000;
  cuMemAlloc_v2_params alloc{&ptr, 1 << 30};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, alloc, fake_context(1));
  EXPECT_EQ(tracker.device_free(), 70ull << 30);
  EXPECT_EQ(tracker.device_total(), 80ull << 30);
  queries.free = 69ull << 30;
  tracker.set_memory_info_interval_ns(3600ull * 1000000000);  // an hour: not measured again
  cuMemFree_v2_params free{ptr};
  drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, free, fake_context(1));
  EXPECT_EQ(tracker.device_free(), 70ull << 30);
}

TEST(CudaDecoders, EveryFamilyDecodesOnlyItsOwnCallbacks) {
  for (int i = 0; i < kDriverMemoryCallbackCount; ++i) {
    CUpti_CallbackId cbid = kDriverMemoryCallbacks[i];
    // Decoders only read params on the side that has data; a zeroed struct
    // large enough for any of them is read safely on the enter side of allocs.
    alignas(16) unsigned char zero[128] = {};
    CudaCall call;
    int claims = decode_device(cbid, zero, false, &call) + decode_pinned(cbid, zero, false, &call) +
                 decode_managed(cbid, zero, false, &call) + decode_async(cbid, zero, false, &call) +
                 decode_vmm(cbid, zero, false, &call);
    EXPECT_EQ(claims, 1) << "callback id " << cbid;
  }
  EXPECT_EQ(kDriverMemoryCallbackCount, 21);
}

}  // namespace
}  // namespace memtrail::cupti::test
