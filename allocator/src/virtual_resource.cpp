#include "memtrail/alloc/virtual_resource.hpp"

#include <algorithm>
#include <iterator>

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

void VirtualResource::plan_addresses(std::vector<std::uint64_t> addresses) {
  std::lock_guard<std::mutex> lock(mutex_);
  planned_ = true;
  plan_ = std::move(addresses);
  plan_next_ = 0;
}

std::uint64_t VirtualResource::planned_addresses_used() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return plan_used_;
}

std::uint64_t VirtualResource::planned_addresses_skipped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return plan_skipped_;
}

bool VirtualResource::overlaps_in_use(std::uint64_t start, std::uint64_t bytes) const {
  if (start == 0 || start + bytes < start) return true;  // null or wrapping: never usable
  auto after = in_use_.upper_bound(start);
  if (after != in_use_.end() && after->first < start + bytes) return true;
  if (after == in_use_.begin()) return false;
  auto before = std::prev(after);
  return before->first + before->second > start;
}

void* VirtualResource::next_range(std::size_t bytes, bool may_use_plan) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::uint64_t span = bytes <= kStride ? kStride : (bytes + kStride - 1) / kStride * kStride;
  // Addresses are never reused: a range past the top of the address space
  // is refused rather than wrapped onto one in use.
  auto fits = [&] { return span != 0 && next_ <= UINT64_MAX - span; };
  if (!fits()) return nullptr;
  if (!planned_) {
    const std::uint64_t address = next_;
    next_ += span;
    return reinterpret_cast<void*>(address);
  }
  // Segment i of the replay takes the address of recorded segment i, or
  // none, so one skipped address does not shift the rest.
  std::uint64_t address = 0;
  if (may_use_plan && plan_next_ < plan_.size()) {
    const std::uint64_t candidate = plan_[plan_next_++];
    if (overlaps_in_use(candidate, bytes))
      ++plan_skipped_;
    else
      address = candidate, ++plan_used_;
  }
  if (!address) {
    // Recorded addresses are real process addresses, which can lie anywhere
    // in the scheme's range: step over the ranges in use.
    while (overlaps_in_use(next_, span)) {
      next_ += kStride;
      if (!fits()) return nullptr;
    }
    address = next_;
    next_ += span;
  }
  in_use_.emplace(address, bytes);
  return reinterpret_cast<void*>(address);
}

void VirtualResource::forget_range(void* p) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  if (planned_) in_use_.erase(reinterpret_cast<std::uint64_t>(p));
}

void VirtualResource::give_back(void* p, std::size_t, std::size_t) noexcept {
  forget_range(p);
}

void VirtualResource::do_release_reservation(void* p, std::size_t) noexcept {
  forget_range(p);
}

std::uint64_t VirtualResource::limit() const {
  return capacity_ && capacity_ < kMaxBytes ? capacity_ : kMaxBytes;
}

// The base class has already counted `bytes` as in use when these run.
void* VirtualResource::acquire(std::size_t bytes, std::size_t, UpstreamFailure* why) {
  const std::uint64_t in_use_before = bytes_in_use() - bytes;
  void* p = bytes_in_use() > limit() ? nullptr : next_range(bytes, true);
  if (!p && why) {
    why->refusal = Refusal::capacity;
    if (bytes_in_use() <= limit())
      why->message = "'" + name() + "' has no address range of " + format_size(bytes) + " left";
    else if (limit() == capacity_)
      why->message = "'" + name() + "' has " + format_size(capacity_) + " of which " +
                     format_size(capacity_ - std::min(capacity_, in_use_before)) +
                     " is free; asked for " + format_size(bytes);
    else
      why->message = "'" + name() + "' holds at most " + format_size(kMaxBytes) +
                     " (the most a virtual device holds); asked for " + format_size(bytes);
  }
  return p;
}

void* VirtualResource::do_reserve(std::size_t bytes) {
  return next_range(bytes, false);
}

bool VirtualResource::do_map(void*, std::size_t bytes, UpstreamFailure* why) {
  if (bytes_in_use() > limit()) {
    if (why) {
      why->refusal = Refusal::capacity;
      why->message = "'" + name() + "' is full";
    }
    return false;
  }
  return true;
}

}  // namespace memtrail::alloc
