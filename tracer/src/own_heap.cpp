// The tracer's own heap (memtrail/detail/own_heap.hpp).
#include "memtrail/detail/own_heap.hpp"

#include <errno.h>
#include <sys/mman.h>

#include <cstring>

#include "block_pool.hpp"
#include "memtrail/detail/address_set.hpp"
#include "memtrail/detail/own_mappings.hpp"
#include "memtrail/trace_file.hpp"

namespace memtrail::detail {

std::atomic<std::uintptr_t> g_own_low{0}, g_own_high{0};

namespace {

constexpr std::size_t kChunkShift = 20;
constexpr std::size_t kChunk = std::size_t{1} << kChunkShift;  // 1 MiB, aligned
constexpr std::size_t kHeader = 16;
constexpr int kMinClassShift = 5;   // 32 bytes, header included
constexpr int kMaxClassShift = 18;  // 256 KiB
constexpr int kClasses = kMaxClassShift - kMinClassShift + 1;
// Header kinds besides a class index.
constexpr std::uint32_t kLarge = 0xffff;
constexpr std::uint32_t kAligned = 0xfffe;

// Before each block: what to do at free.
struct Header {
  std::uint32_t kind;    // size class, kLarge or kAligned
  std::uint32_t offset;  // kAligned: bytes back to the block holding this one
  std::size_t usable;    // bytes the caller may use
};
static_assert(sizeof(Header) == kHeader);

struct FreeBlock {
  FreeBlock* next;
};

// The chunks' base addresses: the project's allocation-free set
// (memtrail/detail/address_set.hpp). 2^16 chunks: 64 GiB of own memory.
constexpr std::size_t kTableSlots = std::size_t{1} << 16;
AddressSet<kTableSlots> g_chunks;

runtime::SpinLock g_lock;
FreeBlock* g_free[kClasses];
unsigned char* g_bump = nullptr;  // the current chunk's unused part
std::size_t g_bump_left = 0;

void table_insert(std::uintptr_t index) {
  g_chunks.insert(index << kChunkShift);
}

void table_remove(std::uintptr_t index) {
  g_chunks.take(index << kChunkShift);
}

// Maps `bytes` (a multiple of kChunk) at a kChunk boundary and registers
// each of its chunks. Under g_lock.
unsigned char* map_chunks(std::size_t bytes, OwnPurpose purpose) {
  void* p =
      ::mmap(nullptr, bytes + kChunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  auto raw = reinterpret_cast<std::uintptr_t>(p);
  std::uintptr_t start = (raw + kChunk - 1) & ~(kChunk - 1);
  if (start > raw) ::munmap(p, start - raw);
  std::uintptr_t end = start + bytes;
  if (raw + bytes + kChunk > end)
    ::munmap(reinterpret_cast<void*>(end), raw + bytes + kChunk - end);
  for (std::uintptr_t c = start; c < end; c += kChunk) table_insert(c >> kChunkShift);
  note_own_mapped(reinterpret_cast<void*>(start), bytes, purpose);
  std::uintptr_t low = g_own_low.load(std::memory_order_relaxed);
  if (low == 0 || start < low) g_own_low.store(start, std::memory_order_relaxed);
  if (end > g_own_high.load(std::memory_order_relaxed))
    g_own_high.store(end, std::memory_order_relaxed);
  return reinterpret_cast<unsigned char*>(start);
}

int class_of(std::size_t with_header) {
  int shift = kMinClassShift;
  while ((std::size_t{1} << shift) < with_header) ++shift;
  return shift - kMinClassShift;
}

void* small_block(int cls) {
  std::size_t bytes = std::size_t{1} << (cls + kMinClassShift);
  g_lock.lock();
  unsigned char* block = reinterpret_cast<unsigned char*>(g_free[cls]);
  if (block != nullptr) {
    g_free[cls] = g_free[cls]->next;
  } else {
    if (g_bump_left < bytes) {
      // The rest of the chunk goes to the free lists, largest classes first.
      for (int c = kClasses - 1; c >= 0; --c) {
        std::size_t size = std::size_t{1} << (c + kMinClassShift);
        while (g_bump_left >= size) {
          auto* f = reinterpret_cast<FreeBlock*>(g_bump);
          f->next = g_free[c];
          g_free[c] = f;
          g_bump += size;
          g_bump_left -= size;
        }
      }
      g_bump = map_chunks(kChunk, OwnPurpose::heap_chunks);
      g_bump_left = g_bump ? kChunk : 0;
      if (g_bump == nullptr) {
        g_lock.unlock();
        return nullptr;
      }
    }
    block = g_bump;
    g_bump += bytes;
    g_bump_left -= bytes;
  }
  g_lock.unlock();
  auto* h = reinterpret_cast<Header*>(block);
  h->kind = static_cast<std::uint32_t>(cls);
  h->offset = 0;
  h->usable = bytes - kHeader;
  return block + kHeader;
}

// Big blocks given back, kept mapped for the next big request: no mmap,
// munmap or chunk-table update for a block taken again. Under g_lock.
constexpr int kCachedBig = 8;
constexpr std::size_t kPage = 4096;
constexpr std::size_t kPageHeaders = kPage / sizeof(Header);
constexpr std::size_t kCachedBigBytes = 64u << 20;
Header* g_cached[kCachedBig];
std::size_t g_cached_bytes = 0;

Header* take_cached(std::size_t bytes) {
  int best = -1;
  for (int i = 0; i < kCachedBig; ++i) {
    Header* h = g_cached[i];
    if (h == nullptr) continue;
    std::size_t size = h->usable + kHeader;
    if (size >= bytes && size <= 2 * bytes && (best < 0 || size < g_cached[best]->usable + kHeader))
      best = i;
  }
  if (best < 0) return nullptr;
  Header* h = g_cached[best];
  g_cached[best] = nullptr;
  g_cached_bytes -= h->usable + kHeader;
  note_own_mapped(h, h->usable + kHeader, OwnPurpose::heap_large);
  return h;
}

bool keep_cached(Header* h) {
  std::size_t size = h->usable + kHeader;
  if (g_cached_bytes + size > kCachedBigBytes) return false;
  for (Header*& slot : g_cached)
    if (slot == nullptr) {
      slot = h;
      g_cached_bytes += size;
      note_own_mapped(h, size, OwnPurpose::heap_cached);
      return true;
    }
  return false;
}

void* large_block(std::size_t n) {
  std::size_t bytes = (n + kHeader + kChunk - 1) & ~(kChunk - 1);
  g_lock.lock();
  if (Header* cached = take_cached(bytes)) {
    g_lock.unlock();
    return cached + 1;
  }
  unsigned char* block = map_chunks(bytes, OwnPurpose::heap_large);
  g_lock.unlock();
  if (block == nullptr) return nullptr;
  auto* h = reinterpret_cast<Header*>(block);
  h->kind = kLarge;
  h->offset = 0;
  h->usable = bytes - kHeader;
  return block + kHeader;
}

Header* header_of(const void* p) {
  return reinterpret_cast<Header*>(
      const_cast<unsigned char*>(static_cast<const unsigned char*>(p)) - kHeader);
}

}  // namespace

void* own_malloc(std::size_t n) noexcept {
  if (n > (std::size_t{1} << 46)) {
    errno = ENOMEM;
    return nullptr;
  }
  void* p = n + kHeader <= (std::size_t{1} << kMaxClassShift) ? small_block(class_of(n + kHeader))
                                                              : large_block(n);
  if (p == nullptr) errno = ENOMEM;
  return p;
}

void* own_calloc(std::size_t count, std::size_t size) noexcept {
  std::size_t n;
  if (__builtin_mul_overflow(count, size, &n)) {
    errno = ENOMEM;
    return nullptr;
  }
  void* p = own_malloc(n);
  if (p != nullptr) std::memset(p, 0, n);  // recycled blocks hold old bytes
  return p;
}

void* own_aligned(std::size_t alignment, std::size_t n) noexcept {
  if (alignment <= kHeader) return own_malloc(n);
  if (alignment > kChunk / 2 || (alignment & (alignment - 1)) != 0) {
    errno = EINVAL;
    return nullptr;
  }
  auto* raw = static_cast<unsigned char*>(own_malloc(n + alignment + kHeader));
  if (raw == nullptr) return nullptr;
  auto at = (reinterpret_cast<std::uintptr_t>(raw) + kHeader + alignment - 1) & ~(alignment - 1);
  Header* h = header_of(reinterpret_cast<void*>(at));
  h->kind = kAligned;
  h->offset = static_cast<std::uint32_t>(at - reinterpret_cast<std::uintptr_t>(raw));
  h->usable = header_of(raw)->usable - h->offset;
  return reinterpret_cast<void*>(at);
}

void own_free(void* p) noexcept {
  if (p == nullptr) return;
  Header* h = header_of(p);
  if (h->kind == kAligned) {
    own_free(static_cast<unsigned char*>(p) - h->offset);
    return;
  }
  if (h->kind == kLarge) {
    std::size_t bytes = h->usable + kHeader;
    auto start = reinterpret_cast<std::uintptr_t>(h);
    // A big block given back stays mapped for reuse but not resident: the
    // program's RSS must not carry what the tracer no longer uses. Blocks up
    // to 4 MiB once kept their pages, for a writer that resized its chunk
    // buffers over and over; it keeps them now, and few blocks are taken
    // again (8 of 16 given back in a whole cc1plus run, 2 of 10 in
    // tight-pairs), while at cc1plus's exit scan 5.2 MiB of them were
    // resident (issue 28, MEMTRAIL_MEMORY_DEBUG). The first page holds the
    // header.
    ::madvise(h + kPageHeaders, bytes - kPage, MADV_DONTNEED);
    g_lock.lock();
    if (keep_cached(h)) {
      g_lock.unlock();
      return;
    }
    for (std::uintptr_t c = start; c < start + bytes; c += kChunk) table_remove(c >> kChunkShift);
    g_lock.unlock();
    note_own_unmapped(h, bytes);
    ::munmap(h, bytes);
    return;
  }
  auto* f = reinterpret_cast<FreeBlock*>(h);
  int cls = static_cast<int>(h->kind);
  g_lock.lock();
  f->next = g_free[cls];
  g_free[cls] = f;
  g_lock.unlock();
}

std::size_t own_usable_size(const void* p) noexcept {
  return p == nullptr ? 0 : header_of(p)->usable;
}

void* own_realloc(void* p, std::size_t n) noexcept {
  if (p == nullptr) return own_malloc(n);
  std::size_t usable = own_usable_size(p);
  if (n <= usable && n >= usable / 4) return p;
  void* q = own_malloc(n);
  if (q == nullptr) return nullptr;
  std::memcpy(q, p, usable < n ? usable : n);
  own_free(p);
  return q;
}

bool own_heap_contains(const void* p) noexcept {
  return g_chunks.contains(reinterpret_cast<std::uintptr_t>(p) & ~(kChunk - 1));
}

namespace {
// zstd's contexts, from the moment libmemtrail.so is loaded.
const bool g_codec_memory_set = [] {
  set_codec_memory([](void*, std::size_t n) { return own_malloc(n); },
                   [](void*, void* p) { own_free(p); });
  return true;
}();
}  // namespace

void own_heap_lock() noexcept {
  g_lock.lock();
}
void own_heap_unlock() noexcept {
  g_lock.unlock();
}

}  // namespace memtrail::detail
