// The few CUDA runtime calls the CUDA upstreams and the caching pool's
// stream events need, behind an interface: cuda_runtime_api() is the real
// one (cudaMalloc, cudaMallocAsync, cudaEventRecord, ...); tests put a fake
// device behind the same interface to check the upstreams' logic (capacity,
// out-of-memory, streams) without a GPU. No CUDA header is needed here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace memtrail::alloc {

// A CUDA stream (cudaStream_t) as the pools see it: its handle's value, 0
// for the legacy default stream.
using StreamId = std::uint64_t;

// Result of a device call: code 0 is success; text is the runtime's error
// string (cudaGetErrorString), out_of_memory marks cudaErrorMemoryAllocation.
struct DeviceStatus {
  int code = 0;
  std::string text;
  bool out_of_memory = false;
  bool ok() const { return code == 0; }
};

enum class DeviceMemory { device, pinned, managed };

// A stream-ordered pool's attributes (cudaMemPoolAttrReservedMemCurrent,
// ...UsedMemCurrent and their _HIGH watermarks), in bytes.
struct DevicePoolUsage {
  std::uint64_t reserved = 0, reserved_high = 0, used = 0, used_high = 0;
};

class DeviceApi {
 public:
  virtual ~DeviceApi() = default;

  // Usable devices; 0 with *error set when there is no driver or device.
  virtual int device_count(std::string* error) = 0;
  virtual DeviceStatus memory_info(int device, std::uint64_t* free, std::uint64_t* total) = 0;

  // cudaMalloc / cudaMallocHost / cudaMallocManaged and their frees. device
  // is ignored for pinned memory.
  virtual DeviceStatus allocate(DeviceMemory kind, int device, std::size_t bytes, void** out) = 0;
  virtual void release(DeviceMemory kind, int device, void* p) noexcept = 0;

  // cudaMallocAsync / cudaFreeAsync on the device's default memory pool.
  virtual DeviceStatus allocate_async(int device, std::size_t bytes, StreamId stream,
                                      void** out) = 0;
  virtual void release_async(int device, void* p, StreamId stream) noexcept = 0;
  virtual DeviceStatus pool_usage(int device, DevicePoolUsage* out) = 0;

  // CUDA events for the caching pool's record_stream: record one on a
  // stream (0 when that fails), ask whether it completed, wait for it,
  // destroy it.
  virtual std::uint64_t record_event(int device, StreamId stream) = 0;
  virtual bool event_done(std::uint64_t event) = 0;
  virtual void wait_event(std::uint64_t event) noexcept = 0;
  virtual void destroy_event(std::uint64_t event) noexcept = 0;
};

// The CUDA runtime. Without CUDA support in this build, a DeviceApi whose
// device_count is 0 ("memtrail was built without CUDA support") and whose
// calls all fail with that text.
DeviceApi& cuda_runtime_api();

}  // namespace memtrail::alloc
