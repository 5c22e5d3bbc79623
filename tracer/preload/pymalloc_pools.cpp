// pymalloc's pools and their free blocks (pymalloc_pools.hpp).
#include "pymalloc_pools.hpp"

namespace memtrail::preload {
namespace {

// Objects/obmalloc.c: ALIGNMENT, POOL_OVERHEAD (sizeof(struct pool_header)
// rounded up to ALIGNMENT) and the size classes below
// SMALL_REQUEST_THRESHOLD (512).
constexpr std::uint32_t kAlignment = 16;
constexpr std::uint32_t kPoolHeader = 48;
constexpr std::uint32_t kSizeClasses = 512 / kAlignment;

// The pool size of an arena of `arena_bytes` (radix tree: 1 MiB arenas of
// 16 KiB pools; without: 256 KiB arenas of 4 KiB pools); 0 for no arena.
std::uint32_t pool_bytes_of(std::uint64_t arena_bytes) {
  if (arena_bytes == std::uint64_t{1} << 20) return 16 * 1024;
  if (arena_bytes == std::uint64_t{1} << 18) return 4 * 1024;
  return 0;
}

std::uint32_t low_half(std::uint64_t word) {
  return static_cast<std::uint32_t>(word);
}

std::uint32_t high_half(std::uint64_t word) {
  return static_cast<std::uint32_t>(word >> 32);
}

}  // namespace

PymallocBlock PymallocPools::block_at(std::uintptr_t at, const MemoryRange& mapping) {
  const std::uint32_t pool_bytes = pool_bytes_of(mapping.end - mapping.begin);
  if (pool_bytes == 0) return {};
  const std::uintptr_t pool = at & ~std::uintptr_t{pool_bytes - 1};
  // An arena's pools start at its first pool-aligned address.
  if (pool < mapping.begin || pool + pool_bytes > mapping.end) return {};
  if (pool_.address != pool || pool_.bytes != pool_bytes) {
    if (!read_pool(pool, pool_bytes)) pool_ = Pool{.address = pool, .bytes = pool_bytes};
  }
  if (!pool_.valid) return {};
  const std::uintptr_t offset = at - pool;
  if (offset < kPoolHeader) return {.state = PymallocBlock::State::header};
  const std::uintptr_t index = (offset - kPoolHeader) / pool_.block_size;
  const std::uintptr_t begin_offset = kPoolHeader + index * pool_.block_size;
  // Past nextoffset (the pool's unused tail included): never handed out.
  const bool free = pool_.empty || begin_offset >= pool_.next_offset || pool_.free[index];
  return {.state = free ? PymallocBlock::State::free : PymallocBlock::State::in_use,
          .begin = pool + begin_offset,
          .size = pool_.block_size};
}

// Reads the pool at `address` whole and checks its header (struct
// pool_header: ref.count, freeblock, nextpool, prevpool, arenaindex, szidx,
// nextoffset, maxnextoffset).
bool PymallocPools::read_pool(std::uintptr_t address, std::uint32_t bytes) {
  if (reader_.read(address, words_.data(), bytes) != bytes) return false;
  const std::uint32_t count = low_half(words_[0]);
  const std::uint32_t size_class = high_half(words_[4]);
  const std::uint32_t next_offset = low_half(words_[5]);
  const std::uint32_t max_next_offset = high_half(words_[5]);
  if (size_class >= kSizeClasses) return false;
  const std::uint32_t block_size = (size_class + 1) * kAlignment;
  if (max_next_offset != bytes - block_size || next_offset < kPoolHeader + block_size ||
      next_offset > max_next_offset + block_size || (next_offset - kPoolHeader) % block_size != 0)
    return false;
  pool_ = Pool{.address = address,
               .bytes = bytes,
               .valid = true,
               .block_size = block_size,
               .next_offset = next_offset};
  if (!walk_free_list(words_[1])) return false;
  // Every block below nextoffset is handed out or on the free list.
  const std::size_t carved = (next_offset - kPoolHeader) / block_size;
  if (count + pool_.free.count() != carved) return false;
  pool_.empty = count == 0;
  return true;
}

// Marks the blocks of the free list starting at `first` (0: none); false
// when a link leaves the pool, falls between blocks or loops.
bool PymallocPools::walk_free_list(std::uint64_t first) {
  for (std::uint64_t block = first; block != 0;) {
    if (block < pool_.address + kPoolHeader) return false;
    const std::uint64_t offset = block - pool_.address;
    if (offset >= pool_.next_offset || (offset - kPoolHeader) % pool_.block_size != 0) return false;
    const std::size_t index = (offset - kPoolHeader) / pool_.block_size;
    if (pool_.free[index]) return false;
    pool_.free[index] = true;
    block = words_[offset / 8];
  }
  return true;
}

}  // namespace memtrail::preload
