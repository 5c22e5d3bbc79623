// Exit-time leak classification, the Valgrind memcheck way: scan root
// ranges for aligned 8-byte words that point into live heap blocks (interior
// pointers count), flood-fill through what they reach, and classify the rest.
//
//   reachable  a chain of start pointers from a root (or a block the caller
//              forces reachable); memcheck's interior-pointer heuristics
//              (interior_heuristics.hpp) count as start pointers
//   possible   reached from a root, but every chain has an interior pointer
//              (memcheck's "possibly lost"; LSan calls these reachable)
//   direct     not reached from anything but other leaked blocks' cycles
//   indirect   reached only from leaked blocks
//
// Direct vs indirect follows Valgrind's "clique" rule: unreached blocks are
// visited in order; each unreached one becomes a direct leak and everything
// it reaches becomes indirect (absorbing earlier direct leaks it reaches). A
// leaked list thus has one direct head, a leaked cycle exactly one direct
// member. Valgrind visits in address order, and its allocator hands out
// rising addresses, so its leader is the cycle's first-allocated block; glibc
// reuses freed chunks, so here the order is allocation order (HeapBlock::age,
// address breaking ties): the leader then does not move with the heap layout
// (a longer working directory, a bigger environment).
//
// Memory is read through MemoryReader, so a root range with unmapped holes or
// a block freed concurrently cannot crash the scan.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "memtrail/event.hpp"

namespace memtrail::preload {

struct HeapBlock {
  std::uint64_t address = 0;
  std::uint64_t size = 0;  // requested bytes: a pointer into [address, address+size) counts
  // A pointer to exactly address + excluded_offset does not count: glibc's
  // next chunk header can overlap the last bytes of a block, and the malloc
  // state points at chunk headers. ~0 = nothing excluded.
  std::uint64_t excluded_offset = ~std::uint64_t{0};
  bool force_reachable = false;  // e.g. blocks the dynamic linker owns (TLS, dtv)
  // Allocation order (smaller = allocated earlier): picks each leaked
  // clique's leader. Equal ages fall back to address order.
  std::uint64_t age = 0;
};

struct MemoryRange {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;
};

// sizeof(struct pthread) in glibc 2.34 .. 2.36 on x86-64.
constexpr std::size_t kGlibcTcbSize = 2368;

// Reads memory that may be unmapped. read() copies up to `length` bytes from
// `address` and returns how many it could read from the start (0 if the first
// byte is unreadable).
class MemoryReader {
 public:
  virtual ~MemoryReader() = default;
  virtual std::size_t read(std::uintptr_t address, void* out, std::size_t length) = 0;
};

// Reads this process's memory with process_vm_readv (falling back to
// /proc/self/mem), so a bad address returns 0 instead of faulting.
class SelfMemoryReader final : public MemoryReader {
 public:
  SelfMemoryReader();
  ~SelfMemoryReader() override;
  std::size_t read(std::uintptr_t address, void* out, std::size_t length) override;

 private:
  int mem_fd_ = -1;
  bool use_vm_readv_ = true;
};

// Says whether a word is a vtable's address, for memcheck's
// multipleinheritance heuristic (interior_heuristics.hpp).
class VtableOracle {
 public:
  virtual ~VtableOracle() = default;
  virtual bool is_vtable(std::uint64_t address, MemoryReader& reader) const = 0;
};

// Says whether a root word still holds the value its module's file gave it:
// a link-time constant, not a pointer (image_constants.hpp).
class ImageConstants {
 public:
  virtual ~ImageConstants() = default;
  virtual bool holds_file_value(std::uintptr_t at, std::uint64_t value) = 0;
};

// Says whether a root word still holds the value it held when the tracer
// started, before any block younger than last_age() existed
// (start_values.hpp).
class StartValues {
 public:
  virtual ~StartValues() = default;
  virtual std::uint64_t last_age() const = 0;
  virtual bool held_at_start(std::uintptr_t at, std::uint64_t value) const = 0;
};

// Says whether a word that points into a block is data, not a reference:
// the payload of a CPython object that holds no references (bytecode,
// bytes, str, int, float) or a block pymalloc has back
// (python_data_words.hpp).
class DataWords {
 public:
  virtual ~DataWords() = default;
  // `at` lies in block `holder`, or in a root range when holder is null;
  // `to_start`: the word is the address of the block it points into.
  virtual bool is_data(std::uintptr_t at, std::uint64_t value, const HeapBlock* holder,
                       bool to_start) = 0;
};

// Why a block was classified possibly lost: the first pointer that reached
// it, the root range (index into the roots) or the block (index into the
// blocks) it was read from, the word's address and its value.
struct PossibleCause {
  long root = -1;
  long block = -1;
  std::uint64_t at = 0;
  std::uint64_t value = 0;
};

// Classifies `blocks` (any order, non-overlapping) given the root ranges
// (roots may overlap blocks or each other). Returns one class per block, in
// the order of `blocks`.
struct ClassifyOptions {
  // The blocks are glibc malloc chunks: a pointer into a block's last bytes
  // that equals the next chunk's header address (where glibc's bins and
  // `top` point) does not count. The header is read through the reader only
  // for such candidates, so a stale block can never fault the scan. And the
  // program runs on glibc: the digit widths at the end of its LC_CTYPE
  // locale data are bytes, not a pointer (glibc_locale_data.hpp).
  bool glibc_chunks = false;
  // When set, memcheck's multipleinheritance heuristic is followed too.
  const VtableOracle* vtables = nullptr;
  // When set, a root word that points into a block but still holds its
  // module file's value is not followed (a constant equal to a heap address
  // by chance: image_constants.hpp). Asked only for such words.
  ImageConstants* image_constants = nullptr;
  // When set, a root word that points inside (not at the start of) a block
  // younger than start_values->last_age() but still holds its start-up value
  // is not followed: it held that value before the block existed. A pointer
  // to a block's start is followed all the same: a dangling pointer of
  // start-up that the program stored again when malloc gave the address back
  // (an integer that equals a block's start exactly is rare, and Valgrind
  // follows it too).
  const StartValues* start_values = nullptr;
  // When set, a word (of a root or of a block) that points into a block
  // but is data is not followed, in the roots' pass and in the leaks'
  // cliques alike: any word of a free pymalloc block (free memory, as a
  // free malloc chunk, which is never scanned), and a word of a CPython
  // object's payload that points inside a block. A pointer to a block's
  // start in a payload is followed all the same, as with start_values: an
  // integer that equals a block's start exactly is rare, and a program may
  // keep a real address there (a ctypes address in an int); Valgrind
  // follows both. Asked about a block's word only when it points inside.
  DataWords* data_words = nullptr;
  // When set, filled with one entry per block (meaningful for the blocks
  // classified possible): MEMTRAIL_SCAN_DEBUG's report.
  std::vector<PossibleCause>* possible_causes = nullptr;
};

std::vector<LeakClass> classify_blocks(std::span<const HeapBlock> blocks,
                                       std::span<const MemoryRange> roots, MemoryReader& reader,
                                       ClassifyOptions options = {});

// The offset of the next chunk's header inside a glibc chunk at `address`
// (its usable size - 8), read from the chunk's size field; ~0 if unreadable.
std::uint64_t glibc_next_header_offset(std::uint64_t address, MemoryReader& reader);

// A glibc thread's static TLS block and descriptor around its thread pointer
// `tp` (x86-64, TLS variant II). `static_size` is _dl_get_tls_static_info's
// size, which counts the descriptor (TLS_TCB_SIZE = sizeof(struct pthread)):
// the TLS blocks take static_size - tcb_size bytes below tp, the descriptor
// `descriptor_extent` bytes from tp up. Memory below that block is not the
// thread's (for the main thread: ld.so's own allocations, which keep stale
// addresses of blocks a dlclose freed).
MemoryRange glibc_static_tls_range(std::uintptr_t tp, std::size_t static_size,
                                   std::uintptr_t descriptor_extent,
                                   std::size_t tcb_size = kGlibcTcbSize);

// Subtracts `holes` from `ranges` (both any order); returns what is left.
std::vector<MemoryRange> subtract_ranges(std::span<const MemoryRange> ranges,
                                         std::span<const MemoryRange> holes);

}  // namespace memtrail::preload
