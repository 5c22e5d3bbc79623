// Words of a CPython 3.11 process that are data, never references: the
// payload of the objects that hold no pointers, and what pymalloc has back.
//
// CPython keeps integers that read like addresses where the scan looks for
// pointers. /usr/bin/python3.11 is linked at a fixed address, so its brk
// heap lies a random distance up to 1 GiB above its .bss: a block's address
// is a 32-bit integer, and bytecode is full of them (`01 00 74 06 00 00 00
// 00`, POP_TOP then LOAD_GLOBAL 6 and its cache, reads 0x6740001). Such
// words in pymalloc's arenas (roots) or in a reachable block covered
// tests/leaks/python_leak_test.cpp's 12,345-byte `ctypes_lost` leaks in
// about 1 run of 750 and made one "possibly lost" instead of "definitely
// lost", depending only on where the kernel put the heap. Valgrind, whose
// heap does not move, meets the same words at the same place in every run.
//
// So a word that points into a block is not followed when it lies
//   * in a block of a pymalloc pool that pymalloc has back (free memory,
//     as a free malloc chunk, which the scan never reads): the bytes of a
//     freed object, the bytecode a freed bytes object carried while a .pyc
//     was unmarshalled, a freed int's digits (pymalloc_pools.hpp);
//   * or, pointing inside the block (not at its start: reachability.hpp),
//     in the payload of an object whose type is exactly one that holds no
//     references: a code object's bytecode (co_code_adaptive), bytes'
//     data, a compact str's characters, an int's digits, a float's value;
//     the object being a malloc'd block (its start), or a block of a
//     pymalloc pool the interpreter holds. Its header and the code object's
//     other fields (co_consts, co_names, ...) are followed as before.
//   * or, pointing inside a block, past the end of the object in its
//     pymalloc block (the end from its type's tp_basicsize and
//     tp_itemsize, checked against the block's size class): pymalloc does
//     not clear a block, and a bytes object's or a cell's last 8 bytes kept
//     an earlier object's pointer to an object freed since;
//   * or, pointing inside a malloc'd block at no object (no refcount and
//     type there), in CPython's own static data, which keeps objects and
//     buffers' starts: the 3.11 parser's dummy name is a static cache of a
//     node of a parser arena freed after the parse, and pointed inside
//     whatever block reused that memory (a leak: "possibly lost");
//   * or when it is a str's state (8 bits of a 4-byte bit-field, then
//     padding: the rest are the block's earlier bytes);
//   * or when it is a class's tp_flags (the subclass bits of int, str,
//     dict, BaseException, ... read as heap addresses): a heap type's, in
//     a malloc'd block past its GC header, or a static type's, in any
//     module's data (a root).
// Valgrind meets these as we do, but its allocator does not hand freed
// memory out again soon and its heap lies elsewhere, so they never point
// into a leak there.
// Only the payloads of exact types count (a subclass instance may keep a
// dict), and an object is trusted only when its payload fits its block.
// Static objects in the modules' data (deep-frozen code) are not told
// apart: image_constants.hpp covers the words that still hold their file's
// value. Only for CPython 3.11 (Py_Version), whose layout this is
// (tracer/src/python_layout.hpp, checked by tests/python/python_layout_test).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "pymalloc_pools.hpp"
#include "reachability.hpp"

namespace memtrail::preload {

// The addresses of the type objects whose instances hold data only, of
// `type` (to tell a type object), and the writable segments of the module
// CPython is in (its static data: python3.11 or libpython3.11.so).
struct PythonTypes {
  std::uintptr_t code = 0, bytes = 0, str = 0, int_ = 0, float_ = 0, type = 0;
  std::array<MemoryRange, 4> image_data = {};
  bool found() const { return code != 0; }
};

// Looks the types up (dlsym) and CPython's segments (dl_iterate_phdr) when
// CPython 3.11 is in the process; none otherwise. At start-up: both take
// the loader's lock. A failed lookup's error is cleared (ours, not the
// program's).
PythonTypes find_python_types();

// Where a word answered "data" lay (MEMTRAIL_SCAN_DEBUG's report).
struct DataWordNote {
  std::uintptr_t at = 0;
  std::uint64_t value = 0;
  const char* what = "";         // "code object's bytecode", ..., "stale bytes"
  std::uintptr_t object = 0;     // the object's (or the free block's) first byte
  std::uint32_t pool_block = 0;  // the pymalloc block size; 0: a malloc'd block
  bool free = false;             // a block pymalloc has back
};

class PythonDataWords final : public DataWords {
 public:
  // `program_mappings`: the program's anonymous mappings (those of an
  // arena's size are read as pymalloc arenas).
  PythonDataWords(const PythonTypes& types, std::span<const MemoryRange> program_mappings,
                  MemoryReader& reader);

  bool is_data(std::uintptr_t at, std::uint64_t value, const HeapBlock* holder,
               bool to_start) override;

  // For MEMTRAIL_SCAN_DEBUG: the pymalloc block around root word `at` and
  // the type its object names ("" when `at` is in no arena).
  std::string describe(std::uintptr_t at);
  // The same for a malloc'd block: the type its object names, if any.
  std::string describe_block(const HeapBlock& block);

  // Keeps a note of each word answered "data".
  void keep_notes() { keep_notes_ = true; }
  const std::vector<DataWordNote>& notes() const { return notes_; }

 private:
  struct Payload {
    std::uintptr_t begin = 0, end = 0;  // absolute; empty: no data-only object
    const char* what = "";
    // A pymalloc block's first byte past its object (absolute); ~0 when
    // unknown, and for a malloc'd block (the scan reads its object only).
    std::uintptr_t slack = ~std::uintptr_t{0};
    std::uintptr_t integer = 0;  // a header word that is no pointer (a str's state)
  };
  const Payload& payload_of(std::uintptr_t object, std::uint64_t bytes, bool pool);
  Payload read_payload(std::uintptr_t object, std::uint64_t bytes);
  std::uint64_t type_of(std::uintptr_t object);
  std::uint64_t object_end(std::uintptr_t block, std::uint64_t bytes);
  bool in_image_data(std::uintptr_t at) const;
  bool is_type_flags(const HeapBlock& block, std::uintptr_t at);
  bool is_type_at(std::uintptr_t object);
  const MemoryRange* arena_of(std::uintptr_t at) const;
  std::string type_name_at(std::uintptr_t object);
  bool note(bool data, const DataWordNote& what);

  PythonTypes types_;
  std::vector<MemoryRange> arenas_;  // sorted
  MemoryReader& reader_;
  PymallocPools pools_;
  // The last object read: a block's words are asked about in a row.
  std::uintptr_t last_object_ = 0;
  Payload last_;
  bool keep_notes_ = false;
  std::vector<DataWordNote> notes_;
};

}  // namespace memtrail::preload
