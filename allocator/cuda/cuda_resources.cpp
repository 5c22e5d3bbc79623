// CUDA upstreams over the runtime API. Built only with MEMTRAIL_WITH_CUDA.
#include "memtrail/alloc/cuda_resources.hpp"

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace memtrail::alloc {
namespace {

std::string device_name(const std::string& given, const char* kind, int device) {
  return given.empty() ? std::string(kind) + " " + std::to_string(device) : given;
}

void refuse(UpstreamFailure* why, const char* call, cudaError_t err) {
  if (why) {
    why->refusal = err == cudaErrorMemoryAllocation ? Refusal::capacity : Refusal::system;
    why->message = std::string(call) + ": " + cudaGetErrorString(err);
  }
  (void)cudaGetLastError();  // clear the sticky-free error state, as PyTorch does
}

void require_device(int device) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("memtrail: no CUDA device: ") + cudaGetErrorString(err));
  if (device < 0 || device >= count)
    throw std::runtime_error("memtrail: CUDA device " + std::to_string(device) +
                             " does not exist (" + std::to_string(count) + " found)");
}

struct DeviceGuard {
  int previous = 0;
  explicit DeviceGuard(int device) {
    cudaGetDevice(&previous);
    if (previous != device) cudaSetDevice(device);
  }
  ~DeviceGuard() { cudaSetDevice(previous); }
};

std::uint64_t device_total(int device, std::uint64_t* free_out = nullptr) {
  DeviceGuard guard(device);
  size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) return 0;
  if (free_out) *free_out = free;
  return total;
}

}  // namespace

int cuda_device_count(std::string* error) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    if (error) *error = cudaGetErrorString(err);
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

CudaDeviceResource::CudaDeviceResource(int device, std::string name)
    : Upstream(device_name(name, "cuda device", device), MemorySpace::device, PoolKind::system,
               nullptr, device) {
  require_device(device);
}

std::uint64_t CudaDeviceResource::capacity() const {
  return device_total(device());
}

std::uint64_t CudaDeviceResource::free_bytes() const {
  std::uint64_t free = 0;
  device_total(device(), &free);
  return free;
}

void* CudaDeviceResource::acquire(std::size_t bytes, std::size_t, UpstreamFailure* why) {
  DeviceGuard guard(device());
  void* p = nullptr;
  cudaError_t err = cudaMalloc(&p, bytes);
  if (err != cudaSuccess) {
    refuse(why, "cudaMalloc", err);
    return nullptr;
  }
  return p;
}

void CudaDeviceResource::give_back(void* p, std::size_t, std::size_t) noexcept {
  DeviceGuard guard(device());
  cudaFree(p);
}

CudaPinnedResource::CudaPinnedResource(std::string name)
    : Upstream(std::move(name), MemorySpace::pinned, PoolKind::system, nullptr) {
  require_device(0);
}

std::uint64_t CudaPinnedResource::capacity() const {
  return UINT64_MAX;
}

void* CudaPinnedResource::acquire(std::size_t bytes, std::size_t, UpstreamFailure* why) {
  void* p = nullptr;
  cudaError_t err = cudaMallocHost(&p, bytes);
  if (err != cudaSuccess) {
    refuse(why, "cudaMallocHost", err);
    return nullptr;
  }
  return p;
}

void CudaPinnedResource::give_back(void* p, std::size_t, std::size_t) noexcept {
  cudaFreeHost(p);
}

CudaManagedResource::CudaManagedResource(int device, std::string name)
    : Upstream(device_name(name, "cuda managed", device), MemorySpace::managed, PoolKind::system,
               nullptr, device) {
  require_device(device);
}

std::uint64_t CudaManagedResource::capacity() const {
  return device_total(device());
}

void* CudaManagedResource::acquire(std::size_t bytes, std::size_t, UpstreamFailure* why) {
  DeviceGuard guard(device());
  void* p = nullptr;
  cudaError_t err = cudaMallocManaged(&p, bytes, cudaMemAttachGlobal);
  if (err != cudaSuccess) {
    refuse(why, "cudaMallocManaged", err);
    return nullptr;
  }
  return p;
}

void CudaManagedResource::give_back(void* p, std::size_t, std::size_t) noexcept {
  DeviceGuard guard(device());
  cudaFree(p);
}

}  // namespace memtrail::alloc
