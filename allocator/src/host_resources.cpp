#include "memtrail/alloc/host_resources.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>

namespace memtrail::alloc {
namespace {

std::uint64_t physical_memory() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * page : UINT64_MAX;
}

std::size_t page_size() {
  static const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

void refuse(UpstreamFailure* why, const std::string& message) {
  if (why) {
    why->refusal = Refusal::system;
    why->message = message;
  }
}

}  // namespace

// --- system heap ---

SystemHeapResource::SystemHeapResource(std::string name)
    : Upstream(std::move(name), MemorySpace::host, PoolKind::system, nullptr) {}

std::uint64_t SystemHeapResource::capacity() const {
  return physical_memory();
}

void* SystemHeapResource::acquire(std::size_t bytes, std::size_t alignment, UpstreamFailure* why) {
  if (alignment < alignof(std::max_align_t)) alignment = alignof(std::max_align_t);
  void* p = nullptr;
  if (posix_memalign(&p, alignment, bytes ? bytes : 1) != 0) {
    refuse(why, "posix_memalign refused " + std::to_string(bytes) + " bytes");
    return nullptr;
  }
  return p;
}

void SystemHeapResource::give_back(void* p, std::size_t, std::size_t) noexcept {
  std::free(p);
}

// --- anonymous mmap ---

MmapResource::MmapResource(std::string name)
    : Upstream(std::move(name), MemorySpace::mmap, PoolKind::system, nullptr) {}

std::uint64_t MmapResource::capacity() const {
  return physical_memory();
}

void* MmapResource::acquire(std::size_t bytes, std::size_t alignment, UpstreamFailure* why) {
  if (alignment <= page_size()) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) return p;
    refuse(why, std::string("mmap: ") + std::strerror(errno));
    return nullptr;
  }
  // Over-map by the alignment and unmap the unaligned head and tail.
  std::size_t span = bytes + alignment;
  void* raw = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    refuse(why, std::string("mmap: ") + std::strerror(errno));
    return nullptr;
  }
  auto base = reinterpret_cast<std::uintptr_t>(raw);
  auto aligned = (base + alignment - 1) & ~(static_cast<std::uintptr_t>(alignment) - 1);
  if (aligned > base) ::munmap(raw, aligned - base);
  std::size_t tail = (base + span) - (aligned + bytes);
  tail -= tail % page_size();
  if (tail) ::munmap(reinterpret_cast<void*>(base + span - tail), tail);
  return reinterpret_cast<void*>(aligned);
}

void MmapResource::give_back(void* p, std::size_t bytes, std::size_t) noexcept {
  ::munmap(p, bytes);
}

// --- file-backed mmap ---

struct FileMmapResource::Mapping {
  std::mutex mutex;
  std::map<std::uintptr_t, std::uint64_t> offsets;  // address -> file offset
};

FileMmapResource::FileMmapResource(std::string path, std::string name)
    : Upstream(std::move(name), MemorySpace::mmap, PoolKind::system, nullptr),
      path_(std::move(path)),
      mappings_(new Mapping) {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    delete mappings_;
    throw std::runtime_error("memtrail: cannot create mmap file '" + path_ +
                             "': " + std::strerror(errno));
  }
}

FileMmapResource::~FileMmapResource() {
  delete mappings_;
  if (fd_ >= 0) ::close(fd_);
}

std::uint64_t FileMmapResource::capacity() const {
  return UINT64_MAX;
}

void* FileMmapResource::acquire(std::size_t bytes, std::size_t alignment, UpstreamFailure* why) {
  if (alignment > page_size()) {
    refuse(why, "file mmap segments are page aligned; alignment " + std::to_string(alignment) +
                    " is not supported");
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(mappings_->mutex);
  const std::size_t span = (bytes + page_size() - 1) / page_size() * page_size();
  const std::uint64_t offset = file_end_;
  if (::ftruncate(fd_, static_cast<off_t>(offset + span)) != 0) {
    refuse(why, "ftruncate '" + path_ + "': " + std::strerror(errno));
    return nullptr;
  }
  void* p =
      ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, static_cast<off_t>(offset));
  if (p == MAP_FAILED) {
    refuse(why, "mmap '" + path_ + "': " + std::strerror(errno));
    return nullptr;
  }
  file_end_ = offset + span;
  mappings_->offsets.emplace(reinterpret_cast<std::uintptr_t>(p), offset);
  return p;
}

void FileMmapResource::give_back(void* p, std::size_t bytes, std::size_t) noexcept {
  const std::size_t span = (bytes + page_size() - 1) / page_size() * page_size();
  ::munmap(p, span);
  std::lock_guard<std::mutex> lock(mappings_->mutex);
  auto it = mappings_->offsets.find(reinterpret_cast<std::uintptr_t>(p));
  if (it == mappings_->offsets.end()) return;
  // Keep the file sparse: the range's blocks go back to the file system.
  ::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(it->second),
              static_cast<off_t>(span));
  mappings_->offsets.erase(it);
}

}  // namespace memtrail::alloc
