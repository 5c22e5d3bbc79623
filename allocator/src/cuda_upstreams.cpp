// CUDA upstreams over a DeviceApi (cuda_resources.hpp). Plain C++: the CUDA
// calls are in the DeviceApi (allocator/cuda/cuda_runtime_api.cpp), so this
// logic is built, and tested with a fake device, with or without CUDA.
#include "memtrail/alloc/cuda_resources.hpp"

#include <stdexcept>
#include <string>

namespace memtrail::alloc {
namespace {

std::string named(const std::string& given, const char* kind, int device) {
  return given.empty() ? std::string(kind) + " " + std::to_string(device) : given;
}

void require_device(DeviceApi& api, int device) {
  std::string why;
  const int count = api.device_count(&why);
  if (count == 0) throw std::runtime_error("memtrail: no CUDA device: " + why);
  if (device < 0 || device >= count)
    throw std::runtime_error("memtrail: CUDA device " + std::to_string(device) +
                             " does not exist (" + std::to_string(count) + " found)");
}

// Total (or free) bytes of a device; 0 when the runtime cannot say.
std::uint64_t device_memory(DeviceApi& api, int device, bool want_free) {
  std::uint64_t free = 0, total = 0;
  if (!api.memory_info(device, &free, &total).ok()) return 0;
  return want_free ? free : total;
}

}  // namespace

int cuda_device_count(std::string* error) {
  return cuda_runtime_api().device_count(error);
}

CudaUpstream::CudaUpstream(DeviceApi& api, std::string name, MemorySpace space, int device)
    : Upstream(std::move(name), space, PoolKind::system, nullptr, device), api_(api) {
  require_device(api, device < 0 ? 0 : device);
}

void* CudaUpstream::checked(const DeviceStatus& status, const char* call, void* p,
                            UpstreamFailure* why) const {
  if (status.ok()) return p;
  if (why) {
    why->refusal = status.out_of_memory ? Refusal::capacity : Refusal::system;
    why->message = std::string(call) + ": " + status.text;
  }
  return nullptr;
}

// --- device memory ---

CudaDeviceResource::CudaDeviceResource(int device, std::string name)
    : CudaDeviceResource(cuda_runtime_api(), device, std::move(name)) {}
CudaDeviceResource::CudaDeviceResource(DeviceApi& api, int device, std::string name)
    : CudaUpstream(api, named(name, "cuda device", device), MemorySpace::device, device) {}

std::uint64_t CudaDeviceResource::capacity() const {
  return device_memory(api(), device(), false);
}
std::uint64_t CudaDeviceResource::free_bytes() const {
  return device_memory(api(), device(), true);
}
void* CudaDeviceResource::acquire(std::size_t bytes, std::size_t, UpstreamFailure* why) {
  void* p = nullptr;
  const DeviceStatus status = api().allocate(DeviceMemory::device, device(), bytes, &p);
  return checked(status, "cudaMalloc", p, why);
}
void CudaDeviceResource::give_back(void* p, std::size_t, std::size_t) noexcept {
  api().release(DeviceMemory::device, device(), p);
}

// --- pinned host memory ---

CudaPinnedResource::CudaPinnedResource(std::string name)
    : CudaPinnedResource(cuda_runtime_api(), std::move(name)) {}
CudaPinnedResource::CudaPinnedResource(DeviceApi& api, std::string name)
    : CudaUpstream(api, std::move(name), MemorySpace::pinned, -1) {}

std::uint64_t CudaPinnedResource::capacity() const {
  return UINT64_MAX;  // host memory: bounded by the process limits only
}
void* CudaPinnedResource::acquire(std::size_t bytes, std::size_t, UpstreamFailure* why) {
  void* p = nullptr;
  const DeviceStatus status = api().allocate(DeviceMemory::pinned, 0, bytes, &p);
  return checked(status, "cudaMallocHost", p, why);
}
void CudaPinnedResource::give_back(void* p, std::size_t, std::size_t) noexcept {
  api().release(DeviceMemory::pinned, 0, p);
}

// --- managed memory ---

CudaManagedResource::CudaManagedResource(int device, std::string name)
    : CudaManagedResource(cuda_runtime_api(), device, std::move(name)) {}
CudaManagedResource::CudaManagedResource(DeviceApi& api, int device, std::string name)
    : CudaUpstream(api, named(name, "cuda managed", device), MemorySpace::managed, device) {}

std::uint64_t CudaManagedResource::capacity() const {
  return device_memory(api(), device(), false);
}
std::uint64_t CudaManagedResource::free_bytes() const {
  return device_memory(api(), device(), true);
}
void* CudaManagedResource::acquire(std::size_t bytes, std::size_t, UpstreamFailure* why) {
  void* p = nullptr;
  const DeviceStatus status = api().allocate(DeviceMemory::managed, device(), bytes, &p);
  return checked(status, "cudaMallocManaged", p, why);
}
void CudaManagedResource::give_back(void* p, std::size_t, std::size_t) noexcept {
  api().release(DeviceMemory::managed, device(), p);
}

// --- stream-ordered pool ---

CudaAsyncResource::CudaAsyncResource(int device, StreamId stream, std::string name)
    : CudaAsyncResource(cuda_runtime_api(), device, stream, std::move(name)) {}
CudaAsyncResource::CudaAsyncResource(DeviceApi& api, int device, StreamId stream, std::string name)
    : CudaUpstream(api, named(name, "cuda async", device), MemorySpace::device, device),
      stream_(stream) {}

std::uint64_t CudaAsyncResource::capacity() const {
  return device_memory(api(), device(), false);
}
// Memory the pool holds but does not use is free to this resource's next
// cudaMallocAsync as well as what the device has left.
std::uint64_t CudaAsyncResource::free_bytes() const {
  const DevicePoolUsage u = pool_usage();
  return device_memory(api(), device(), true) + (u.reserved > u.used ? u.reserved - u.used : 0);
}
DevicePoolUsage CudaAsyncResource::pool_usage() const {
  DevicePoolUsage u;
  if (!api().pool_usage(device(), &u).ok()) return {};
  return u;
}
void* CudaAsyncResource::acquire(std::size_t bytes, std::size_t, UpstreamFailure* why) {
  void* p = nullptr;
  const DeviceStatus status = api().allocate_async(device(), bytes, stream_, &p);
  return checked(status, "cudaMallocAsync", p, why);
}
void CudaAsyncResource::give_back(void* p, std::size_t, std::size_t) noexcept {
  api().release_async(device(), p, stream_);
}

}  // namespace memtrail::alloc
