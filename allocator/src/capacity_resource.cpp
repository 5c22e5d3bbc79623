#include "memtrail/alloc/capacity_resource.hpp"

#include "memtrail/size.hpp"

namespace memtrail::alloc {

CapacityLimitedResource::CapacityLimitedResource(Upstream& inner, std::uint64_t capacity,
                                                 std::string name, MemorySpace space, int device)
    : Upstream(std::move(name), space, PoolKind::system, &inner, device),
      inner_(inner),
      capacity_(capacity) {}

std::uint64_t CapacityLimitedResource::free_bytes() const {
  const std::uint64_t used = bytes_in_use();
  return capacity_ > used ? capacity_ - used : 0;
}

// Called after the base class already counted `bytes` as in use.
bool CapacityLimitedResource::fits(std::size_t bytes, UpstreamFailure* why) const {
  if (bytes_in_use() <= capacity_) return true;
  if (why) {
    why->refusal = Refusal::capacity;
    why->message = "'" + name() + "' has " + format_size(capacity_) + " of which " +
                   format_size(capacity_ - (bytes_in_use() - bytes)) + " is free; asked for " +
                   format_size(bytes);
  }
  return false;
}

void* CapacityLimitedResource::acquire(std::size_t bytes, std::size_t alignment,
                                       UpstreamFailure* why) {
  if (!fits(bytes, why)) return nullptr;
  return inner_.allocate_segment(bytes, alignment, why);
}

void CapacityLimitedResource::give_back(void* p, std::size_t bytes,
                                        std::size_t alignment) noexcept {
  inner_.release_segment(p, bytes, alignment);
}

void* CapacityLimitedResource::do_reserve(std::size_t bytes) {
  return inner_.reserve_address_space(bytes);
}

void CapacityLimitedResource::do_release_reservation(void* p, std::size_t bytes) noexcept {
  inner_.release_address_space(p, bytes);
}

bool CapacityLimitedResource::do_map(void* p, std::size_t bytes, UpstreamFailure* why) {
  if (!fits(bytes, why)) return false;
  return inner_.map_pages(p, bytes, why);
}

void CapacityLimitedResource::do_unmap(void* p, std::size_t bytes) noexcept {
  inner_.unmap_pages(p, bytes);
}

}  // namespace memtrail::alloc
