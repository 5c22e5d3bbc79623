// The CUDA upstreams' logic (capacity, free bytes, out-of-memory with the
// CUDA error text, streams, CUDA events for record_stream) through a fake
// CUDA runtime behind the DeviceApi the real one implements. The pools on
// top are the real CachingPool and BfcPool.
#include <gtest/gtest.h>

#include <string>

#include "fake_device_api.hpp"
#include "memtrail/alloc/bfc_pool.hpp"
#include "memtrail/alloc/caching_pool.hpp"
#include "memtrail/alloc/capacity_resource.hpp"
#include "memtrail/alloc/cuda_resources.hpp"

namespace {

using namespace memtrail::alloc;
using memtrail::test::FakeDeviceApi;
constexpr std::uint64_t kMiB = 1ull << 20;

CachingConfig native() {
  return CachingConfig::parse("");
}

std::vector<std::string> names(const FakeDeviceApi& api) {
  std::vector<std::string> out;
  for (auto& [call, stream] : api.calls) out.push_back(call + "@" + std::to_string(stream));
  return out;
}

TEST(CudaUpstreams, CapacityAndFreeBytesComeFromTheDevice) {
  FakeDeviceApi api({64 * kMiB, 32 * kMiB});
  CudaDeviceResource dev1(api, 1);
  EXPECT_EQ(dev1.name(), "cuda device 1");
  EXPECT_EQ(dev1.device(), 1);
  EXPECT_EQ(dev1.space(), memtrail::MemorySpace::device);
  EXPECT_EQ(dev1.capacity(), 32 * kMiB);
  void* p = dev1.allocate(10 * kMiB);
  EXPECT_EQ(api.used(1), 10 * kMiB);
  EXPECT_EQ(api.used(0), 0u);
  EXPECT_EQ(dev1.free_bytes(), 22 * kMiB);
  EXPECT_EQ(dev1.bytes_in_use(), 10 * kMiB);
  dev1.deallocate(p, 10 * kMiB);
  EXPECT_EQ(dev1.free_bytes(), 32 * kMiB);
  EXPECT_EQ(names(api), (std::vector<std::string>{"cudaMalloc@0", "cudaFree@0"}));

  CudaPinnedResource pinned(api, "pinned");
  EXPECT_EQ(pinned.capacity(), UINT64_MAX);
  EXPECT_EQ(pinned.space(), memtrail::MemorySpace::pinned);
  void* h = pinned.allocate(kMiB);
  EXPECT_EQ(api.used(0), 0u);  // host memory
  pinned.deallocate(h, kMiB);
  CudaManagedResource managed(api, 0);
  EXPECT_EQ(managed.name(), "cuda managed 0");
  void* m = managed.allocate(4 * kMiB);
  EXPECT_EQ(managed.free_bytes(), 60 * kMiB);
  managed.deallocate(m, 4 * kMiB);
  EXPECT_EQ(api.live_allocations(), 0u);
}

TEST(CudaUpstreams, NoDeviceOrAWrongOneThrowsWithTheReason) {
  FakeDeviceApi none({});
  try {
    CudaDeviceResource d(none, 0);
    ADD_FAILURE() << "constructed without a device";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "memtrail: no CUDA device: no CUDA-capable device is detected");
  }
  FakeDeviceApi one({kMiB});
  try {
    CudaAsyncResource d(one, 3, 0);
    ADD_FAILURE() << "constructed on device 3";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "memtrail: CUDA device 3 does not exist (1 found)");
  }
}

TEST(CudaUpstreams, RefusalsCarryTheCudaErrorText) {
  FakeDeviceApi api({8 * kMiB});
  CudaDeviceResource dev(api, 0);
  UpstreamFailure why;
  EXPECT_EQ(dev.allocate_segment(9 * kMiB, 512, &why), nullptr);
  EXPECT_EQ(why.refusal, Refusal::capacity);  // pools free their cache and retry
  EXPECT_EQ(why.message, "cudaMalloc: out of memory");
  api.fail_next_with = 700;
  UpstreamFailure why2;
  EXPECT_EQ(dev.allocate_segment(kMiB, 512, &why2), nullptr);
  EXPECT_EQ(why2.refusal, Refusal::system);
  EXPECT_EQ(why2.message, "cudaMalloc: an illegal memory access was encountered");
  EXPECT_EQ(dev.bytes_in_use(), 0u);
}

TEST(CudaUpstreams, CachingPoolOomReportsTheDevicesFreeAndTotal) {
  FakeDeviceApi api({64 * kMiB});
  CudaDeviceResource dev(api, 0);
  CachingPool pool(dev, native());
  void* a = pool.malloc(40 * kMiB);
  EXPECT_EQ(api.used(0), 40 * kMiB);
  try {
    pool.malloc(30 * kMiB);
    ADD_FAILURE() << "no OOM";
  } catch (const OutOfMemoryError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("CUDA out of memory. Tried to allocate 30.00 MiB. GPU 0 "
                                          "has a total capacity of 64.00 MiB of which 24.00 MiB "
                                          "is free.",
                                          0),
              0u)
        << e.what();
  }
  EXPECT_EQ(pool.memory_stats().at("num_ooms"), 1);
  pool.free(a);
  pool.empty_cache();
  EXPECT_EQ(api.used(0), 0u);
}

TEST(CudaUpstreams, BfcPoolPreallocatesAFractionOfTheDeviceAndNamesCudaOnOom) {
  FakeDeviceApi api({100 * kMiB});
  CudaDeviceResource dev(api, 0);
  BfcPool pool(dev, BfcOptions::parse("memory_fraction:0.5"));
  EXPECT_EQ(api.used(0), 50 * kMiB);
  EXPECT_EQ(pool.stats().bytes_limit, static_cast<std::int64_t>(50 * kMiB));
  void* p = pool.allocate_raw(40 * kMiB);
  EXPECT_THROW(pool.allocate_raw(20 * kMiB), OutOfMemoryError);
  pool.deallocate_raw(p);

  FakeDeviceApi small({10 * kMiB});
  CudaDeviceResource dev2(small, 0);
  BfcPool grow(dev2, BfcOptions::parse("preallocate:False,memory_limit:64MiB"));
  try {
    grow.allocate_raw(12 * kMiB);
    ADD_FAILURE() << "no OOM";
  } catch (const OutOfMemoryError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("; upstream: cudaMalloc: out of memory"), std::string::npos) << what;
  }
}

TEST(CudaUpstreams, RecordStreamWaitsForTheRealEventOnTheOtherStream) {
  FakeDeviceApi api({64 * kMiB});
  CudaDeviceResource dev(api, 0);
  CachingPool pool(dev, native());
  const StreamId compute = 0x1000, copy = 0x2000;  // cudaStream_t values
  void* p = pool.malloc(kMiB, compute);
  pool.record_stream(p, copy);
  pool.free(p);
  EXPECT_EQ(api.live_events(), 1u);
  EXPECT_EQ(names(api).back(), "cudaEventRecord@8192");  // on the stream that used it
  void* q = pool.malloc(kMiB, compute);                  // the copy may still read p
  EXPECT_NE(q, p);
  EXPECT_EQ(api.live_events(), 1u);
  api.complete_stream(copy);  // the GPU got through the copy stream's work
  pool.free(q);
  void* r = pool.malloc(kMiB, compute);  // event done at this malloc: p's block is free
  EXPECT_EQ(api.live_events(), 0u);
  EXPECT_EQ(pool.memory_stats().at("num_sync_all_streams"), 0);
  pool.free(r);

  // empty_cache with a pending event waits for it (cudaEventSynchronize).
  void* s = pool.malloc(3 * kMiB, compute);
  pool.record_stream(s, copy);
  pool.free(s);
  pool.empty_cache();
  EXPECT_EQ(api.waits, 1);
  EXPECT_EQ(api.live_events(), 0u);
  EXPECT_EQ(api.used(0), 0u);
}

TEST(CudaUpstreams, PendingEventsAreDestroyedWithThePool) {
  FakeDeviceApi api({64 * kMiB});
  {
    CudaDeviceResource dev(api, 0);
    CachingPool pool(dev, native());
    void* p = pool.malloc(kMiB, 1);
    pool.record_stream(p, 2);
    pool.free(p);
    EXPECT_EQ(api.live_events(), 1u);
  }
  EXPECT_EQ(api.live_events(), 0u);
  EXPECT_EQ(api.live_allocations(), 0u);
}

TEST(CudaUpstreams, ACapacityLimitOverTheDeviceKeepsItsEvents) {
  FakeDeviceApi api({64 * kMiB});
  CudaDeviceResource dev(api, 0);
  CapacityLimitedResource limited(dev, 32 * kMiB, "16 of 64");
  CachingPool pool(limited, native());
  void* p = pool.malloc(kMiB, 1);
  pool.record_stream(p, 2);
  pool.free(p);
  EXPECT_EQ(api.live_events(), 1u);  // a real event, recorded on stream 2
  EXPECT_EQ(names(api).back(), "cudaEventRecord@2");
  api.complete_stream(2);
  pool.free(pool.malloc(kMiB, 1));
  EXPECT_EQ(api.live_events(), 0u);
}

TEST(CudaUpstreams, StreamOrderedUpstreamAllocatesOnItsStream) {
  FakeDeviceApi api({64 * kMiB});
  CudaAsyncResource async(api, 0, 0x77);
  EXPECT_EQ(async.name(), "cuda async 0");
  EXPECT_EQ(async.stream(), 0x77u);
  CachingPool pool(async, native());
  void* a = pool.malloc(3 * kMiB, 0x77);  // one 20 MiB segment
  DevicePoolUsage u = async.pool_usage();
  EXPECT_EQ(u.used, 20 * kMiB);
  EXPECT_EQ(u.reserved, 20 * kMiB);
  pool.free(a);
  pool.empty_cache();  // cudaFreeAsync: the stream-ordered pool keeps it reserved
  u = async.pool_usage();
  EXPECT_EQ(u.used, 0u);
  EXPECT_EQ(u.reserved, 20 * kMiB);
  EXPECT_EQ(u.used_high, 20 * kMiB);
  EXPECT_EQ(async.free_bytes(), 64 * kMiB);  // 44 MiB on the device + 20 reserved, unused
  EXPECT_EQ(names(api), (std::vector<std::string>{"cudaMallocAsync@119", "cudaFreeAsync@119"}));
  UpstreamFailure why;
  EXPECT_EQ(async.allocate_segment(70 * kMiB, 512, &why), nullptr);  // 20 reserved + 50 > 64
  EXPECT_EQ(why.message, "cudaMallocAsync: out of memory");
}

}  // namespace
