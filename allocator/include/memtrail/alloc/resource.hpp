// Base classes of the allocator stack.
//
// Resource: a std::pmr::memory_resource with an identity in the trace (name,
// memory space, pool id, upstream). Upstream: a Resource that pools take
// memory from in segments. Upstreams never throw on plain exhaustion when a
// pool asks (allocate_segment returns nullptr and says why), because pools
// must be able to free cached memory and retry; used directly through pmr
// they throw OutOfMemoryError / LimitError.
//
// Upstreams also offer an address-space reservation with pages mapped on
// demand, which CachingPool's expandable segments use. The default host
// implementation reserves with mmap(PROT_NONE) and maps with mprotect.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory_resource>
#include <string>

#include "memtrail/alloc/errors.hpp"
#include "memtrail/event.hpp"

namespace memtrail::alloc {

class DeviceApi;

class Resource : public std::pmr::memory_resource {
 public:
  Resource(std::string name, MemorySpace space, PoolKind kind, const Resource* upstream,
           int device = -1);
  Resource(const Resource&) = delete;
  Resource& operator=(const Resource&) = delete;

  const std::string& name() const { return name_; }
  MemorySpace space() const { return space_; }
  PoolKind kind() const { return kind_; }
  const Resource* upstream() const { return upstream_; }
  int device() const { return device_; }
  // Id of this resource in the trace's pool table (registered once, at
  // construction).
  std::uint32_t pool_id() const { return pool_id_; }

 protected:
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }

 private:
  std::string name_;
  MemorySpace space_;
  PoolKind kind_;
  const Resource* upstream_;
  int device_;
  std::uint32_t pool_id_;
};

// Why an upstream refused memory.
enum class Refusal { none, capacity, limit, system };

struct UpstreamFailure {
  Refusal refusal = Refusal::none;
  std::string message;  // one line
  // For Refusal::limit: which limit, what was in use and the limit.
  LimitError::Which which = LimitError::Which::resource_max_bytes;
  std::uint64_t in_use = 0, limit = 0;
};

class Upstream : public Resource {
 public:
  using Resource::Resource;
  ~Upstream() override = default;

  // Segment interface for pools. nullptr (and *why filled) on failure.
  void* allocate_segment(std::size_t bytes, std::size_t alignment, UpstreamFailure* why = nullptr);
  void release_segment(void* p, std::size_t bytes, std::size_t alignment) noexcept;

  // Address space for expandable segments: reserve_address_space hands out
  // an inaccessible range; map_pages makes [p, p+bytes) usable (charged
  // against capacity and limits); unmap_pages gives the memory back.
  virtual bool supports_address_reservation() const { return true; }
  void* reserve_address_space(std::size_t bytes);
  void release_address_space(void* p, std::size_t bytes) noexcept;
  bool map_pages(void* p, std::size_t bytes, UpstreamFailure* why = nullptr);
  void unmap_pages(void* p, std::size_t bytes) noexcept;

  // Total memory of the underlying device (or this upstream's capacity);
  // UINT64_MAX when unbounded. Free = capacity - in use, as far as known.
  virtual std::uint64_t capacity() const = 0;
  virtual std::uint64_t free_bytes() const;
  // The CUDA runtime behind a CUDA upstream (pools record stream events
  // through it); nullptr for host memory.
  virtual DeviceApi* device_api() const { return nullptr; }
  // Bytes handed out: live segments plus mapped pages.
  std::uint64_t bytes_in_use() const { return in_use_.load(std::memory_order_relaxed); }

  // Per-resource limit (0 = none), JavaCPP maxBytes style.
  void set_max_bytes(std::uint64_t bytes) { max_bytes_ = bytes; }
  std::uint64_t max_bytes() const { return max_bytes_; }

 protected:
  // Whether the bytes are real memory of this process (charged to the
  // process-wide limits). False for the virtual upstream and for wrappers,
  // whose inner upstream charges.
  virtual bool charges_process_limits() const { return true; }
  // Returns nullptr when the system refuses.
  virtual void* acquire(std::size_t bytes, std::size_t alignment, UpstreamFailure* why) = 0;
  virtual void give_back(void* p, std::size_t bytes, std::size_t alignment) noexcept = 0;
  virtual void* do_reserve(std::size_t bytes);
  virtual void do_release_reservation(void* p, std::size_t bytes) noexcept;
  virtual bool do_map(void* p, std::size_t bytes, UpstreamFailure* why);
  virtual void do_unmap(void* p, std::size_t bytes) noexcept;

  void* do_allocate(std::size_t bytes, std::size_t alignment) override;
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override;

 private:
  bool admit(std::size_t bytes, UpstreamFailure* why);  // limits; charges on success
  void discharge(std::size_t bytes) noexcept;
  std::atomic<std::uint64_t> in_use_{0};
  std::uint64_t max_bytes_ = 0;
};

}  // namespace memtrail::alloc
