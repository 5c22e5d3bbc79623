// CPython's small-object allocator, pymalloc (Objects/obmalloc.c, 3.10 and
// 3.11 on 64-bit): which of its blocks holds an address, and whether the
// interpreter has that block now or pymalloc has it back.
//
// pymalloc maps 1 MiB arenas (the program mappings the exit scan takes as
// roots: program_mappings.hpp) and carves them into 16 KiB pools aligned to
// their size, each serving one size class (16 .. 512 bytes in steps of 16).
// A pool starts with a 48-byte header (count of blocks handed out, free
// list, links, size class, `nextoffset`, `maxnextoffset`); its blocks
// follow. A block is free when it is on the pool's free list (linked
// through each free block's first word) or at or past `nextoffset` (not
// handed out since the pool took its size class); every block of a pool
// whose count is 0 is free. A free block keeps the bytes of the object it
// held, but its first word: a freed bytes object's data, a freed int's
// digits. Built without the radix tree (--without-pymalloc-radix-tree),
// arenas are 256 KiB and pools 4 KiB: a mapping of either arena size is
// read with its geometry.
//
// The header is trusted only when it is consistent (a size class below 32,
// `maxnextoffset` the pool size less one block, `nextoffset` on a block
// boundary, the free list inside the pool, on block boundaries, below
// `nextoffset` and as long as the pool has blocks at most): any other
// memory reads as no pool.
#pragma once

#include <bitset>
#include <cstdint>
#include <vector>

#include "reachability.hpp"

namespace memtrail::preload {

struct PymallocBlock {
  enum class State : std::uint8_t {
    not_a_pool,  // `at` is not in a pool of a pymalloc arena
    header,      // in a pool's header
    in_use,      // in a block the interpreter holds
    free,        // in a block pymalloc holds (on the free list, or never handed out)
  };
  State state = State::not_a_pool;
  std::uintptr_t begin = 0;  // the block's first byte (in_use, free)
  std::uint32_t size = 0;    // the pool's block size
};

class PymallocPools {
 public:
  explicit PymallocPools(MemoryReader& reader) : reader_(reader), words_(kMaxPoolBytes / 8) {}

  // The block around `at`, which lies in `mapping`, one mapping the
  // program made (a pymalloc arena when it is one arena's size).
  PymallocBlock block_at(std::uintptr_t at, const MemoryRange& mapping);

 private:
  static constexpr std::size_t kMaxPoolBytes = 16 * 1024;
  static constexpr std::size_t kMaxBlocks = kMaxPoolBytes / 16;

  // The pool last read, whole: the scan asks about neighbouring words.
  struct Pool {
    std::uintptr_t address = 0;
    std::uint32_t bytes = 0;
    bool valid = false;  // false: the memory there is no pool
    bool empty = false;  // no block handed out: all free
    std::uint32_t block_size = 0;
    std::uint32_t next_offset = 0;
    std::bitset<kMaxBlocks> free = {};  // by block index, below next_offset
  };

  bool read_pool(std::uintptr_t address, std::uint32_t bytes);
  bool walk_free_list(std::uint64_t first);

  MemoryReader& reader_;
  Pool pool_;
  // The pool's words (on the heap: the scan may run on a small alternate
  // signal stack).
  std::vector<std::uint64_t> words_;
};

}  // namespace memtrail::preload
