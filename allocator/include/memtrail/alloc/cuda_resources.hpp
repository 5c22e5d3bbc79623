// CUDA upstreams (built when MEMTRAIL_WITH_CUDA): device memory (cudaMalloc),
// pinned host memory (cudaMallocHost) and managed memory
// (cudaMallocManaged). Constructing one without a usable GPU throws
// std::runtime_error with the CUDA error text.
#pragma once

#include "memtrail/alloc/resource.hpp"

namespace memtrail::alloc {

// Number of usable CUDA devices; 0 (and *error set) when the runtime or
// driver is missing. Always available, returns 0 without CUDA support.
int cuda_device_count(std::string* error = nullptr);

#if defined(MEMTRAIL_WITH_CUDA) && MEMTRAIL_WITH_CUDA

class CudaDeviceResource final : public Upstream {
 public:
  explicit CudaDeviceResource(int device = 0, std::string name = "");
  std::uint64_t capacity() const override;
  std::uint64_t free_bytes() const override;
  bool supports_address_reservation() const override { return false; }

 protected:
  void* acquire(std::size_t bytes, std::size_t alignment, UpstreamFailure* why) override;
  void give_back(void* p, std::size_t bytes, std::size_t alignment) noexcept override;
};

class CudaPinnedResource final : public Upstream {
 public:
  explicit CudaPinnedResource(std::string name = "cuda pinned");
  std::uint64_t capacity() const override;
  bool supports_address_reservation() const override { return false; }

 protected:
  void* acquire(std::size_t bytes, std::size_t alignment, UpstreamFailure* why) override;
  void give_back(void* p, std::size_t bytes, std::size_t alignment) noexcept override;
};

class CudaManagedResource final : public Upstream {
 public:
  explicit CudaManagedResource(int device = 0, std::string name = "");
  std::uint64_t capacity() const override;
  bool supports_address_reservation() const override { return false; }

 protected:
  void* acquire(std::size_t bytes, std::size_t alignment, UpstreamFailure* why) override;
  void give_back(void* p, std::size_t bytes, std::size_t alignment) noexcept override;
};

#endif

}  // namespace memtrail::alloc
