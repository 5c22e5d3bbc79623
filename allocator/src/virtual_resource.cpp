#include "memtrail/alloc/virtual_resource.hpp"

#include "memtrail/size.hpp"

namespace memtrail::alloc {

VirtualResource::VirtualResource(std::uint64_t capacity, std::string name, MemorySpace space,
                                 int device)
    : Upstream(std::move(name), space, PoolKind::system, nullptr, device), capacity_(capacity) {}

std::uint64_t VirtualResource::capacity() const {
  return capacity_ ? capacity_ : UINT64_MAX;
}

std::uint64_t VirtualResource::free_bytes() const {
  if (!capacity_) return UINT64_MAX;
  const std::uint64_t used = bytes_in_use();
  return capacity_ > used ? capacity_ - used : 0;
}

void* VirtualResource::next_range(std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::uint64_t address = next_;
  const std::uint64_t span = bytes <= kStride ? kStride : (bytes + kStride - 1) / kStride * kStride;
  next_ += span;
  return reinterpret_cast<void*>(address);
}

// The base class has already counted `bytes` as in use when these run.
void* VirtualResource::acquire(std::size_t bytes, std::size_t, UpstreamFailure* why) {
  if (capacity_ && bytes_in_use() > capacity_) {
    if (why) {
      why->refusal = Refusal::capacity;
      why->message = "'" + name() + "' has " + format_size(capacity_) + " of which " +
                     format_size(capacity_ - (bytes_in_use() - bytes)) + " is free; asked for " +
                     format_size(bytes);
    }
    return nullptr;
  }
  return next_range(bytes);
}

void* VirtualResource::do_reserve(std::size_t bytes) {
  return next_range(bytes);
}

bool VirtualResource::do_map(void*, std::size_t bytes, UpstreamFailure* why) {
  if (capacity_ && bytes_in_use() > capacity_) {
    if (why) {
      why->refusal = Refusal::capacity;
      why->message = "'" + name() + "' is full";
    }
    return false;
  }
  return true;
}

}  // namespace memtrail::alloc
