// The CUDA tracer's own cost per cudaMalloc/cudaFree pair, without a GPU:
// the CUPTI callback handler (CudaTracker + RecorderSink) driven with
// hand-filled cuMemAlloc_v2/cuMemFree_v2 parameter structs, enter and exit,
// as the driver calls it, into a real recording with host stacks (libunwind,
// DWARF, unwound at every alloc). scripts/gpu-check measures the whole cost
// on a GPU; this is the part the tracer adds to every call, on any machine.
// Measured on the 2-core development machine (2026-12-02, shared, noisy):
// 0.77-0.84 us per pair (wall), 0.60-0.65 us CPU.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "cuda_tracker.hpp"
#include "memtrail/recorder.hpp"
#include "recorder_sink.hpp"

namespace {

using namespace memtrail::cupti;

// One device, one context; no stream ids or memory figures (as when the
// driver cannot say).
struct OneDevice final : DeviceQueries {
  int device_of(CUcontext) override { return 0; }
  std::uint32_t stream_id(CUcontext, CUstream, bool) override { return 0; }
  bool memory_info(std::uint64_t*, std::uint64_t*) override { return false; }
  bool pool_reserved(int, CUmemoryPool, std::uint64_t*) override { return false; }
};

template <class Params>
void drive(CudaTracker& tracker, CUpti_CallbackId cbid, Params& params) {
  ApiCall call;
  call.cbid = cbid;
  call.params = &params;
  call.context = reinterpret_cast<CUcontext>(0x1000);
  tracker.on_driver_call(call);
  call.exit = true;
  tracker.on_driver_call(call);
}

void BM_CudaMallocFreeHandler(benchmark::State& state) {
  const std::string path = "/tmp/memtrail-bench-cupti-" + std::to_string(getpid()) + ".mtr";
  memtrail::RecorderOptions o;
  o.output = path;
  if (!memtrail::start(o)) std::abort();
  {
    RecorderSink sink;
    OneDevice queries;
    CudaTracker tracker(sink, queries);
    CUdeviceptr ptr = 0x7f0000000000;
    for (auto _ : state) {
      cuMemAlloc_v2_params alloc{&ptr, 1 << 20};
      drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, alloc);
      cuMemFree_v2_params free{ptr};
      drive(tracker, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, free);
      ptr += 1 << 20;
    }
  }
  memtrail::stop();
  std::remove(path.c_str());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CudaMallocFreeHandler);

}  // namespace

BENCHMARK_MAIN();
