// The real DeviceApi: the CUDA runtime. Built only with MEMTRAIL_WITH_CUDA.
#include <cuda_runtime_api.h>

#include "memtrail/alloc/device_api.hpp"

namespace memtrail::alloc {
namespace {

DeviceStatus status_of(cudaError_t err) {
  DeviceStatus s;
  if (err == cudaSuccess) return s;
  s.code = static_cast<int>(err);
  s.text = cudaGetErrorString(err);
  s.out_of_memory = err == cudaErrorMemoryAllocation;
  (void)cudaGetLastError();  // clear the non-sticky error, as PyTorch does
  return s;
}

// Makes `device` current for one call and restores the caller's device.
struct DeviceGuard {
  int previous = -1;
  explicit DeviceGuard(int device) {
    if (device < 0 || cudaGetDevice(&previous) != cudaSuccess) return;
    if (previous != device) cudaSetDevice(device);
  }
  ~DeviceGuard() {
    if (previous >= 0) cudaSetDevice(previous);
  }
};

cudaStream_t stream_of(StreamId s) {
  return reinterpret_cast<cudaStream_t>(static_cast<std::uintptr_t>(s));
}

class CudaRuntimeApi final : public DeviceApi {
 public:
  int device_count(std::string* error) override {
    int count = 0;
    const DeviceStatus s = status_of(cudaGetDeviceCount(&count));
    if (!s.ok()) {
      if (error) *error = s.text;
      return 0;
    }
    if (count == 0 && error) *error = "no CUDA-capable device is detected";
    return count;
  }
  DeviceStatus memory_info(int device, std::uint64_t* free, std::uint64_t* total) override {
    DeviceGuard guard(device);
    size_t f = 0, t = 0;
    DeviceStatus s = status_of(cudaMemGetInfo(&f, &t));
    *free = f;
    *total = t;
    return s;
  }
  DeviceStatus allocate(DeviceMemory kind, int device, std::size_t bytes, void** out) override {
    if (kind == DeviceMemory::pinned) return status_of(cudaMallocHost(out, bytes));
    DeviceGuard guard(device);
    if (kind == DeviceMemory::managed)
      return status_of(cudaMallocManaged(out, bytes, cudaMemAttachGlobal));
    return status_of(cudaMalloc(out, bytes));
  }
  void release(DeviceMemory kind, int device, void* p) noexcept override {
    if (kind == DeviceMemory::pinned) {
      cudaFreeHost(p);
      return;
    }
    DeviceGuard guard(device);
    cudaFree(p);
  }
  DeviceStatus allocate_async(int device, std::size_t bytes, StreamId stream, void** out) override {
    DeviceGuard guard(device);
    return status_of(cudaMallocAsync(out, bytes, stream_of(stream)));
  }
  void release_async(int device, void* p, StreamId stream) noexcept override {
    DeviceGuard guard(device);
    cudaFreeAsync(p, stream_of(stream));
  }
  DeviceStatus pool_usage(int device, DevicePoolUsage* out) override {
    cudaMemPool_t pool;
    DeviceStatus s = status_of(cudaDeviceGetDefaultMemPool(&pool, device));
    if (!s.ok()) return s;
    const std::pair<cudaMemPoolAttr, std::uint64_t*> attrs[] = {
        {cudaMemPoolAttrReservedMemCurrent, &out->reserved},
        {cudaMemPoolAttrReservedMemHigh, &out->reserved_high},
        {cudaMemPoolAttrUsedMemCurrent, &out->used},
        {cudaMemPoolAttrUsedMemHigh, &out->used_high}};
    for (auto [attr, value] : attrs) {
      std::uint64_t v = 0;  // the attributes are cuuint64_t (64-bit), not size_t
      s = status_of(cudaMemPoolGetAttribute(pool, attr, &v));
      if (!s.ok()) return s;
      *value = v;
    }
    return s;
  }
  std::uint64_t record_event(int device, StreamId stream) override {
    DeviceGuard guard(device);
    cudaEvent_t ev = nullptr;
    if (!status_of(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming)).ok()) return 0;
    if (!status_of(cudaEventRecord(ev, stream_of(stream))).ok()) {
      cudaEventDestroy(ev);
      return 0;
    }
    return reinterpret_cast<std::uint64_t>(ev);
  }
  bool event_done(std::uint64_t event) override {
    const cudaError_t err = cudaEventQuery(reinterpret_cast<cudaEvent_t>(event));
    if (err == cudaErrorNotReady) (void)cudaGetLastError();
    return err != cudaErrorNotReady;  // an error also ends the wait: the event is gone
  }
  void wait_event(std::uint64_t event) noexcept override {
    cudaEventSynchronize(reinterpret_cast<cudaEvent_t>(event));
  }
  void destroy_event(std::uint64_t event) noexcept override {
    cudaEventDestroy(reinterpret_cast<cudaEvent_t>(event));
  }
};

}  // namespace

DeviceApi& cuda_runtime_api() {
  static CudaRuntimeApi api;
  return api;
}

}  // namespace memtrail::alloc
