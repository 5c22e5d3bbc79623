// Upstreams: virtual address scheme, capacity limits, heap, mmap,
// file-backed mmap, pool identity; CUDA upstreams when a GPU is present.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <memory_resource>
#include <vector>

#include "memtrail/alloc/caching_pool.hpp"
#include "memtrail/alloc/capacity_resource.hpp"
#include "memtrail/alloc/cuda_resources.hpp"
#include "memtrail/alloc/host_resources.hpp"
#include "memtrail/alloc/virtual_resource.hpp"
#include "test_util.hpp"

namespace {

using namespace memtrail::alloc;
constexpr std::uint64_t kKiB = 1024, kMiB = 1ull << 20;

std::uint64_t addr(void* p) {
  return reinterpret_cast<std::uint64_t>(p);
}

TEST(VirtualResource, AddressSchemeOfTheReferenceModel) {
  VirtualResource device;
  void* a = device.allocate_segment(2 * kMiB, 512);
  void* b = device.allocate_segment(20 * kMiB, 512);
  EXPECT_EQ(addr(a), 0x7f0000000000u);
  EXPECT_EQ(addr(b), 0x7f0000000000u + (1ull << 32));
  device.release_segment(a, 2 * kMiB, 512);
  void* c = device.allocate_segment(2 * kMiB, 512);  // never reused
  EXPECT_EQ(addr(c), 0x7f0000000000u + (2ull << 32));
  void* big = device.allocate_segment(5ull << 30, 512);  // 5 GiB: advances 8 GiB
  void* d = device.allocate_segment(kMiB, 512);
  EXPECT_EQ(addr(d), addr(big) + (8ull << 30));
  EXPECT_EQ(device.bytes_in_use(), 23 * kMiB + (5ull << 30));
}

TEST(VirtualResource, CapacityRefusesWithoutThrowingForPools) {
  VirtualResource device(10 * kMiB);
  UpstreamFailure why;
  EXPECT_NE(device.allocate_segment(8 * kMiB, 512, &why), nullptr);
  EXPECT_EQ(device.allocate_segment(4 * kMiB, 512, &why), nullptr);
  EXPECT_EQ(why.refusal, Refusal::capacity);
  EXPECT_EQ(why.message,
            "'virtual device' has 10.00 MiB of which 2.00 MiB is free; asked for 4.00 MiB");
  EXPECT_EQ(device.free_bytes(), 2 * kMiB);
  EXPECT_EQ(device.bytes_in_use(), 8 * kMiB);
  EXPECT_THROW((void)device.allocate(4 * kMiB), OutOfMemoryError);
}

TEST(CapacityLimitedResource, ActsLikeASmallDeviceOnHostMemory) {
  SystemHeapResource heap;
  CapacityLimitedResource device(heap, kMiB, "16 GiB device, scaled");
  EXPECT_EQ(device.upstream(), &heap);
  EXPECT_EQ(device.space(), memtrail::MemorySpace::device);
  void* a = device.allocate(512 * kKiB);
  std::memset(a, 1, 512 * kKiB);
  EXPECT_EQ(heap.bytes_in_use(), 512 * kKiB);
  UpstreamFailure why;
  EXPECT_EQ(device.allocate_segment(600 * kKiB, 16, &why), nullptr);
  EXPECT_EQ(why.refusal, Refusal::capacity);
  EXPECT_EQ(heap.bytes_in_use(), 512 * kKiB);  // nothing leaked on refusal
  EXPECT_EQ(device.capacity(), kMiB);
  EXPECT_EQ(device.free_bytes(), 512 * kKiB);
  device.deallocate(a, 512 * kKiB);
  EXPECT_EQ(device.bytes_in_use(), 0u);
  EXPECT_EQ(heap.bytes_in_use(), 0u);
}

TEST(HostResources, HeapAndMmapHandOutUsableAlignedMemory) {
  SystemHeapResource heap;
  std::pmr::vector<double> v(&heap);
  v.assign(1000, 2.5);
  EXPECT_EQ(v[999], 2.5);
  void* h = heap.allocate(100, 4096);
  EXPECT_EQ(addr(h) % 4096, 0u);
  heap.deallocate(h, 100, 4096);

  MmapResource mmap;
  EXPECT_EQ(mmap.space(), memtrail::MemorySpace::mmap);
  void* m = mmap.allocate(3 * kMiB, 2 * kMiB);
  EXPECT_EQ(addr(m) % (2 * kMiB), 0u);
  std::memset(m, 7, 3 * kMiB);
  EXPECT_EQ(mmap.bytes_in_use(), 3 * kMiB);
  mmap.deallocate(m, 3 * kMiB, 2 * kMiB);
  EXPECT_EQ(mmap.bytes_in_use(), 0u);
}

TEST(HostResources, FileBackedMmapGrowsTheFile) {
  memtrail::test::TempDir dir;
  const std::string path = dir.path + "/workspace.bin";
  FileMmapResource file(path);
  auto* a = static_cast<char*>(file.allocate(100 * kKiB));
  auto* b = static_cast<char*>(file.allocate(kMiB));
  std::memset(a, 'a', 100 * kKiB);
  std::memset(b, 'b', kMiB);
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_GE(static_cast<std::uint64_t>(st.st_size), 100 * kKiB + kMiB);
  EXPECT_EQ(a[100 * kKiB - 1], 'a');
  file.deallocate(a, 100 * kKiB);
  file.deallocate(b, kMiB);
  EXPECT_EQ(file.bytes_in_use(), 0u);
  EXPECT_THROW(FileMmapResource("/nonexistent-dir/x.bin"), std::runtime_error);
}

TEST(CudaResources, DeviceMemoryWhenAGpuIsPresent) {
  std::string why;
  if (cuda_device_count(&why) == 0) GTEST_SKIP() << "no CUDA device (" << why << ")";
#if defined(MEMTRAIL_WITH_CUDA) && MEMTRAIL_WITH_CUDA
  CudaDeviceResource device(0);
  EXPECT_GT(device.capacity(), 0u);
  void* p = device.allocate(kMiB);
  EXPECT_NE(p, nullptr);
  device.deallocate(p, kMiB);
  CudaPinnedResource pinned;
  void* h = pinned.allocate(kMiB);
  std::memset(h, 1, kMiB);
  pinned.deallocate(h, kMiB);
  CudaManagedResource managed(0);
  void* m = managed.allocate(kMiB);
  std::memset(m, 1, kMiB);
  managed.deallocate(m, kMiB);
  CudaAsyncResource async(0, 0);  // the legacy default stream
  void* d = async.allocate(kMiB);
  EXPECT_GE(async.pool_usage().used, kMiB);
  async.deallocate(d, kMiB);
  EXPECT_GE(async.pool_usage().used_high, kMiB);
#endif
}

TEST(CudaResources, WithoutADeviceConstructionThrowsTheRuntimesReason) {
  std::string why;
  if (cuda_device_count(&why) > 0) GTEST_SKIP() << "a CUDA device is present";
  for (int kind = 0; kind < 4; ++kind) {
    try {
      if (kind == 0) CudaDeviceResource r(0);
      if (kind == 1) CudaPinnedResource r;
      if (kind == 2) CudaManagedResource r(0);
      if (kind == 3) CudaAsyncResource r(0, 0);
      ADD_FAILURE() << "kind " << kind << " constructed without a device";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "memtrail: no CUDA device: " + why);
    }
  }
}

// record_stream over the real runtime: the free waits for a real CUDA event
// on the other stream (the legacy default stream, 0), which a malloc after
// the device went idle sees complete.
TEST(CudaResources, CachingPoolWaitsForARealEventWhenAGpuIsPresent) {
  std::string why;
  if (cuda_device_count(&why) == 0) GTEST_SKIP() << "no CUDA device (" << why << ")";
  CudaDeviceResource device(0);
  CachingPool pool(device, CachingConfig::parse(""));
  void* p = pool.malloc(kMiB, 1);  // 1: cudaStreamLegacy's value, only a key to the pool
  pool.record_stream(p, 0);
  pool.free(p);
  EXPECT_EQ(pool.memory_stats().at("active_bytes.all.current"), static_cast<std::int64_t>(kMiB));
  int mallocs = 0;
  for (int i = 0; i < 1000 && pool.memory_stats().at("active_bytes.all.current") != 0; ++i) {
    pool.free(pool.malloc(512, 1));  // each malloc queries the event
    ++mallocs;
  }
  EXPECT_EQ(pool.memory_stats().at("active_bytes.all.current"), 0) << mallocs << " mallocs";
  pool.empty_cache();
  EXPECT_EQ(pool.reserved_bytes(), 0u);
}

}  // namespace
