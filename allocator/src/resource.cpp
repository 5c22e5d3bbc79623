#include "memtrail/alloc/resource.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include "memtrail/alloc/errors.hpp"
#include "memtrail/alloc/limits.hpp"
#include "memtrail/recorder.hpp"
#include "memtrail/size.hpp"

namespace memtrail::alloc {

Resource::Resource(std::string name, MemorySpace space, PoolKind kind, const Resource* upstream,
                   int device)
    : name_(std::move(name)), space_(space), kind_(kind), upstream_(upstream), device_(device) {
  PoolInfo info;
  info.name = name_;
  info.kind = kind_;
  info.space = space_;
  info.device = device_;
  info.parent = upstream_ ? upstream_->pool_id() : 0;
  pool_id_ = register_pool(info);
}

bool Upstream::admit(std::size_t bytes, UpstreamFailure* why) {
  const std::uint64_t in_use = in_use_.load(std::memory_order_relaxed);
  if (max_bytes_ && in_use + bytes > max_bytes_) {
    if (why) {
      why->refusal = Refusal::limit;
      why->message = "memtrail: max_bytes of '" + name() + "' exceeded: in use " +
                     format_size(in_use) + " + request " + format_size(bytes) + " > limit " +
                     format_size(max_bytes_);
      why->which = LimitError::Which::resource_max_bytes;
      why->in_use = in_use;
      why->limit = max_bytes_;
    }
    return false;
  }
  if (charges_process_limits()) {
    try {
      ProcessLimits::instance().charge(bytes, name());
    } catch (const LimitError& e) {
      if (why) {
        why->refusal = Refusal::limit;
        why->message = e.what();
        why->which = e.which();
        why->in_use = e.in_use();
        why->limit = e.limit();
      }
      return false;
    }
  }
  in_use_.fetch_add(bytes, std::memory_order_relaxed);
  return true;
}

void Upstream::discharge(std::size_t bytes) noexcept {
  in_use_.fetch_sub(bytes, std::memory_order_relaxed);
  if (charges_process_limits()) ProcessLimits::instance().uncharge(bytes);
}

void* Upstream::allocate_segment(std::size_t bytes, std::size_t alignment, UpstreamFailure* why) {
  if (!admit(bytes, why)) return nullptr;
  void* p = acquire(bytes, alignment, why);
  if (!p) {
    discharge(bytes);
    return nullptr;
  }
  record_alloc(pool_id(), p, bytes, bytes);
  return p;
}

void Upstream::release_segment(void* p, std::size_t bytes, std::size_t alignment) noexcept {
  if (!p) return;
  record_free(pool_id(), p, bytes);
  give_back(p, bytes, alignment);
  discharge(bytes);
}

void* Upstream::reserve_address_space(std::size_t bytes) {
  return do_reserve(bytes);
}
void Upstream::release_address_space(void* p, std::size_t bytes) noexcept {
  do_release_reservation(p, bytes);
}

bool Upstream::map_pages(void* p, std::size_t bytes, UpstreamFailure* why) {
  if (!admit(bytes, why)) return false;
  if (!do_map(p, bytes, why)) {
    discharge(bytes);
    return false;
  }
  record_segment(EventKind::segment_reserve, pool_id(), reinterpret_cast<std::uintptr_t>(p), bytes,
                 SegmentDetail::map);
  return true;
}

void Upstream::unmap_pages(void* p, std::size_t bytes) noexcept {
  record_segment(EventKind::segment_release, pool_id(), reinterpret_cast<std::uintptr_t>(p), bytes,
                 SegmentDetail::map);
  do_unmap(p, bytes);
  discharge(bytes);
}

std::uint64_t Upstream::free_bytes() const {
  const std::uint64_t cap = capacity();
  const std::uint64_t used = bytes_in_use();
  return cap > used ? cap - used : 0;
}

void* Upstream::do_reserve(std::size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

void Upstream::do_release_reservation(void* p, std::size_t bytes) noexcept {
  ::munmap(p, bytes);
}

bool Upstream::do_map(void* p, std::size_t bytes, UpstreamFailure* why) {
  if (::mprotect(p, bytes, PROT_READ | PROT_WRITE) == 0) return true;
  if (why) {
    why->refusal = Refusal::system;
    why->message = std::string("mprotect: ") + std::strerror(errno);
  }
  return false;
}

void Upstream::do_unmap(void* p, std::size_t bytes) noexcept {
  // Drop the pages first so the memory really goes back to the system.
  ::madvise(p, bytes, MADV_DONTNEED);
  ::mprotect(p, bytes, PROT_NONE);
}

void* Upstream::do_allocate(std::size_t bytes, std::size_t alignment) {
  UpstreamFailure why;
  void* p = allocate_segment(bytes, alignment, &why);
  if (p) return p;
  if (why.refusal == Refusal::limit)
    throw LimitError(why.which, why.message, bytes, why.in_use, why.limit);
  throw OutOfMemoryError("memtrail: '" + name() + "' could not allocate " + format_size(bytes) +
                         (why.message.empty() ? std::string() : ": " + why.message));
}

void Upstream::do_deallocate(void* p, std::size_t bytes, std::size_t alignment) {
  release_segment(p, bytes, alignment);
}

}  // namespace memtrail::alloc
