// CUDA upstreams for CachingPool, BfcPool and the other pools: device
// memory (cudaMalloc), pinned host memory (cudaMallocHost), managed memory
// (cudaMallocManaged) and a stream-ordered pool (cudaMallocAsync on the
// device's default memory pool). Each calls the CUDA runtime through a
// DeviceApi (device_api.hpp): cuda_runtime_api() unless one is given.
// Constructing one without a usable device throws std::runtime_error with
// the CUDA error text. A refused allocation is Refusal::capacity for
// cudaErrorMemoryAllocation (the pools then free cached memory and retry)
// and its message names the call and the CUDA error, e.g.
// "cudaMalloc: out of memory".
//
// A caching pool over one of these records real CUDA events for its
// record_stream logic (Upstream::device_api()); StreamIds are the
// cudaStream_t values.
#pragma once

#include "memtrail/alloc/device_api.hpp"
#include "memtrail/alloc/resource.hpp"

namespace memtrail::alloc {

// Number of usable CUDA devices; 0 (and *error set) when the runtime or
// driver is missing, or memtrail was built without CUDA.
int cuda_device_count(std::string* error = nullptr);

// What the four upstreams share: the API, its device, the refusal text.
class CudaUpstream : public Upstream {
 public:
  CudaUpstream(DeviceApi& api, std::string name, MemorySpace space, int device);
  DeviceApi* device_api() const override { return &api_; }
  bool supports_address_reservation() const override { return false; }

 protected:
  DeviceApi& api() const { return api_; }
  // nullptr and *why filled when status failed.
  void* checked(const DeviceStatus& status, const char* call, void* p, UpstreamFailure* why) const;

 private:
  DeviceApi& api_;
};

class CudaDeviceResource final : public CudaUpstream {
 public:
  explicit CudaDeviceResource(int device = 0, std::string name = "");
  CudaDeviceResource(DeviceApi& api, int device, std::string name = "");
  std::uint64_t capacity() const override;
  std::uint64_t free_bytes() const override;

 protected:
  void* acquire(std::size_t bytes, std::size_t alignment, UpstreamFailure* why) override;
  void give_back(void* p, std::size_t bytes, std::size_t alignment) noexcept override;
};

class CudaPinnedResource final : public CudaUpstream {
 public:
  explicit CudaPinnedResource(std::string name = "cuda pinned");
  CudaPinnedResource(DeviceApi& api, std::string name);
  std::uint64_t capacity() const override;

 protected:
  void* acquire(std::size_t bytes, std::size_t alignment, UpstreamFailure* why) override;
  void give_back(void* p, std::size_t bytes, std::size_t alignment) noexcept override;
};

class CudaManagedResource final : public CudaUpstream {
 public:
  explicit CudaManagedResource(int device = 0, std::string name = "");
  CudaManagedResource(DeviceApi& api, int device, std::string name = "");
  std::uint64_t capacity() const override;
  std::uint64_t free_bytes() const override;

 protected:
  void* acquire(std::size_t bytes, std::size_t alignment, UpstreamFailure* why) override;
  void give_back(void* p, std::size_t bytes, std::size_t alignment) noexcept override;
};

// Stream-ordered: every segment is cudaMallocAsync'ed and cudaFreeAsync'ed
// on this resource's stream, from the device's default memory pool, so a
// pool over it (usually one per stream) gets memory ordered after the work
// already queued on that stream. pool_usage() reads the memory pool's
// reserved/used bytes and their high watermarks.
class CudaAsyncResource final : public CudaUpstream {
 public:
  explicit CudaAsyncResource(int device = 0, StreamId stream = 0, std::string name = "");
  CudaAsyncResource(DeviceApi& api, int device, StreamId stream, std::string name = "");
  std::uint64_t capacity() const override;
  std::uint64_t free_bytes() const override;
  StreamId stream() const { return stream_; }
  // Zeros when the attributes cannot be read.
  DevicePoolUsage pool_usage() const;

 protected:
  void* acquire(std::size_t bytes, std::size_t alignment, UpstreamFailure* why) override;
  void give_back(void* p, std::size_t bytes, std::size_t alignment) noexcept override;

 private:
  StreamId stream_;
};

}  // namespace memtrail::alloc
