// An upstream with a fixed capacity over another one: "a 16 GiB device" on
// host memory, so out-of-memory paths run in CI. Requests that would take
// the bytes in use above the capacity are refused (Refusal::capacity), like
// cudaMalloc returning cudaErrorMemoryAllocation.
#pragma once

#include "memtrail/alloc/resource.hpp"

namespace memtrail::alloc {

class CapacityLimitedResource final : public Upstream {
 public:
  CapacityLimitedResource(Upstream& inner, std::uint64_t capacity, std::string name = "device",
                          MemorySpace space = MemorySpace::device, int device = 0);
  std::uint64_t capacity() const override { return capacity_; }
  std::uint64_t free_bytes() const override;
  bool supports_address_reservation() const override {
    return inner_.supports_address_reservation();
  }
  // A limit over a CUDA device is still that device: pools record its events.
  DeviceApi* device_api() const override { return inner_.device_api(); }

 protected:
  bool charges_process_limits() const override { return false; }  // the inner one does
  void* acquire(std::size_t bytes, std::size_t alignment, UpstreamFailure* why) override;
  void give_back(void* p, std::size_t bytes, std::size_t alignment) noexcept override;
  void* do_reserve(std::size_t bytes) override;
  void do_release_reservation(void* p, std::size_t bytes) noexcept override;
  bool do_map(void* p, std::size_t bytes, UpstreamFailure* why) override;
  void do_unmap(void* p, std::size_t bytes) noexcept override;

 private:
  bool fits(std::size_t bytes, UpstreamFailure* why) const;
  Upstream& inner_;
  std::uint64_t capacity_;
};

}  // namespace memtrail::alloc
