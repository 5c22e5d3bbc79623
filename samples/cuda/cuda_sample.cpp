// The CUDA sample: kernels on a CachingPool over cudaMalloc (two streams and
// record_stream, so the pool waits for real CUDA events), a deliberate
// device leak (kernels.cu), an out-of-memory caught and reported with the
// pool's breakdown, and a stream-ordered pool (cudaMallocAsync) with its
// reserved/used attributes. Its "figures" line is what scripts/gpu-check
// compares with the trace of `memtrail run --cuda`. Exits 0 when its own
// checks hold; without a device it says so and exits 0 (CI builds it).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels.cuh"
#include "memtrail/alloc/caching_pool.hpp"
#include "memtrail/alloc/cuda_resources.hpp"

namespace {

using namespace memtrail::alloc;

int failures = 0;

void expect(bool ok, const char* what) {
  if (!ok) {
    std::printf("cuda_sample: FAILED: %s\n", what);
    ++failures;
  }
}

StreamId id_of(cudaStream_t s) {
  return reinterpret_cast<StreamId>(s);
}

struct PoolFigures {
  std::int64_t num_device_alloc = 0, reserved_peak = 0, allocations = 0;
};

// Two 16 MiB tensors and a saxpy on the compute stream, the result zeroed
// on the copy stream (record_stream), many small tensors, then an OOM.
PoolFigures caching_pool_phase() {
  CudaDeviceResource device(0);
  CachingPool pool(device, CachingConfig::parse(""), "cuda sample pool");
  cudaStream_t compute = nullptr, copy = nullptr;
  cudaStreamCreate(&compute);
  cudaStreamCreate(&copy);
  const std::size_t n = 4u << 20;  // floats: 16 MiB each
  auto* x = static_cast<float*>(pool.malloc(n * sizeof(float), id_of(compute)));
  auto* y = static_cast<float*>(pool.malloc(n * sizeof(float), id_of(compute)));
  expect(cuda_sample::fill_and_saxpy(3.0f, x, y, n, compute) == 5.0f, "saxpy gives 3*1+2");
  pool.record_stream(y, id_of(copy));  // y is used on the copy stream too
  cudaMemsetAsync(y, 0, n * sizeof(float), copy);
  pool.free(x);
  pool.free(y);  // deferred: a CUDA event on the copy stream guards it
  std::vector<void*> small;
  for (int i = 0; i < 100; ++i) small.push_back(pool.malloc(4096, id_of(compute)));
  for (void* p : small) pool.free(p);
  cudaStreamSynchronize(copy);
  pool.free(pool.malloc(4096, id_of(compute)));  // this malloc sees y's event done
  expect(pool.memory_stats().at("active_bytes.all.current") == 0,
         "y's block is free once the copy stream passed its event");

  try {
    pool.malloc(device.capacity() + (1ull << 30), id_of(compute));
    expect(false, "a request larger than the device fails");
  } catch (const OutOfMemoryError& e) {
    std::printf("cuda_sample: out of memory caught: %s\n%s", e.what(),
                pool.memory_summary().c_str());
  }
  const auto stats = pool.memory_stats();
  expect(stats.at("num_ooms") == 1, "one OOM counted");
  PoolFigures f{stats.at("num_device_alloc"), stats.at("reserved_bytes.all.peak"),
                stats.at("allocation.all.allocated")};
  cudaStreamDestroy(compute);
  cudaStreamDestroy(copy);
  return f;  // the pool gives every segment back here
}

struct AsyncFigures {
  int allocs = 0;
  std::uint64_t reserved = 0;  // the pool's reserve with all blocks live: its peak
};

// Eight 1 MiB blocks from the device's stream-ordered pool, freed in order.
AsyncFigures async_phase() {
  cudaStream_t s = nullptr;
  cudaStreamCreate(&s);
  CudaAsyncResource async(0, id_of(s), "cuda sample async");
  std::vector<void*> blocks;
  for (int i = 0; i < 8; ++i) blocks.push_back(async.allocate(1u << 20));
  const DevicePoolUsage live = async.pool_usage();
  for (void* p : blocks) async.deallocate(p, 1u << 20);
  cudaStreamSynchronize(s);
  const DevicePoolUsage done = async.pool_usage();
  std::printf(
      "cuda_sample: stream-ordered pool: with 8 MiB live reserved=%llu used=%llu; after "
      "sync reserved=%llu used=%llu reserved_high=%llu used_high=%llu\n",
      (unsigned long long)live.reserved, (unsigned long long)live.used,
      (unsigned long long)done.reserved, (unsigned long long)done.used,
      (unsigned long long)done.reserved_high, (unsigned long long)done.used_high);
  expect(live.used >= (8u << 20) && live.reserved >= live.used, "8 MiB used and reserved");
  expect(done.used == 0 && done.used_high >= (8u << 20), "all given back; high stays");
  cudaStreamDestroy(s);
  return {static_cast<int>(blocks.size()), live.reserved};
}

}  // namespace

int main() {
  std::string why;
  if (cuda_device_count(&why) == 0) {
    std::printf("cuda_sample: no CUDA device (%s); nothing to run\n", why.c_str());
    return 0;
  }
  cuda_sample::leak_device_buffers();
  const PoolFigures pool = caching_pool_phase();
  const AsyncFigures async = async_phase();
  // Context destroy: compute-sanitizer and memtrail report the leak here.
  cudaDeviceReset();
  std::printf(
      "cuda_sample: figures leak_blocks=%d leak_bytes=%zu num_device_alloc=%lld "
      "reserved_peak=%lld pool_allocations=%lld async_allocs=%d async_reserved=%llu\n",
      cuda_sample::kLeakBlocks, cuda_sample::kLeakBlocks * cuda_sample::kLeakBytes,
      (long long)pool.num_device_alloc, (long long)pool.reserved_peak, (long long)pool.allocations,
      async.allocs, (unsigned long long)async.reserved);
  std::printf("cuda_sample: %s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
