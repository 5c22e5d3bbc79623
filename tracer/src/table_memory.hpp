// Zeroed memory for the stack trie's big arrays, mapped by system call.
//
// Interning a new stack reads the trie's index and nodes at random places
// (tens of MB with a million distinct stacks): with 4 KiB pages nearly every
// such read also misses the TLB. A table of 2 MiB or more is therefore
// mapped on a 2 MiB boundary and offered to transparent huge pages
// (MADV_HUGEPAGE; the machine's THP mode "madvise" or "always" takes it,
// "never" leaves 4 KiB pages and only the speed differs). Fresh mappings are
// zero and untouched pages cost no memory, so a table is not cleared.
#pragma once

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>

#include "memtrail/detail/own_mappings.hpp"

namespace memtrail::runtime {

template <class T>
class TableMemory {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "zero pages must be valid elements");

 public:
  TableMemory() = default;
  // `count` zeroed elements; throws std::bad_alloc when the mapping fails.
  // `huge` = false keeps 4 KiB pages (a small program's first chunk: a huge
  // page would make all of it resident).
  explicit TableMemory(std::size_t count, bool huge = true) : bytes_(round_up(count * sizeof(T))) {
    if (bytes_ == 0) return;
    data_ = static_cast<T*>(huge && bytes_ >= kHuge ? map_huge(bytes_) : raw_map(bytes_));
    detail::note_own_mapped(data_, bytes_, detail::OwnPurpose::stack_trie);
  }
  TableMemory(TableMemory&& o) noexcept : data_(o.data_), bytes_(o.bytes_) {
    o.data_ = nullptr;
    o.bytes_ = 0;
  }
  TableMemory& operator=(TableMemory&& o) noexcept {
    if (this != &o) {
      release();
      data_ = o.data_;
      bytes_ = o.bytes_;
      o.data_ = nullptr;
      o.bytes_ = 0;
    }
    return *this;
  }
  ~TableMemory() { release(); }

  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T* get() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  void release() {
    if (data_) {
      detail::note_own_unmapped(data_, bytes_);
      ::syscall(SYS_munmap, data_, bytes_);
    }
    data_ = nullptr;
    bytes_ = 0;
  }

  static constexpr std::size_t kHuge = std::size_t{2} << 20;

 private:
  static std::size_t round_up(std::size_t bytes) {
    std::size_t unit = bytes >= kHuge ? kHuge : 4096;
    return (bytes + unit - 1) / unit * unit;
  }
  // By system call: the preload's mmap interposer must not take the
  // tracer's own mappings for the program's.
  static void* raw_map(std::size_t bytes) {
    long m = ::syscall(SYS_mmap, nullptr, bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m < 0 && m > -4096) throw std::bad_alloc();
    return reinterpret_cast<void*>(m);
  }
  static void* map_huge(std::size_t bytes) {
    // Map 2 MiB more, then trim both ends to the aligned part.
    auto raw = reinterpret_cast<std::uintptr_t>(raw_map(bytes + kHuge));
    std::uintptr_t start = (raw + kHuge - 1) & ~(kHuge - 1);
    if (start > raw) ::syscall(SYS_munmap, raw, start - raw);
    std::uintptr_t end = start + bytes, raw_end = raw + bytes + kHuge;
    if (raw_end > end) ::syscall(SYS_munmap, end, raw_end - end);
    ::syscall(SYS_madvise, start, bytes, MADV_HUGEPAGE);  // refused: 4 KiB pages
    return reinterpret_cast<void*>(start);
  }

  T* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace memtrail::runtime
