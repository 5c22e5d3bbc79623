// Valgrind memcheck's --leak-check-heuristics (its default is "all"): interior
// pointers that C++ and some C libraries make on purpose, so a block reached
// through one counts as reached through its start, not as "possibly lost".
//
// Followed here, with memcheck's exact tests (mc_leak.c, heuristic_reachedness):
//   stdstring  ptr = block + 24; word 1 (capacity) + 25 = block size and
//              word 0 (length) <= capacity: the pre-C++11 COW std::string rep
//   length64   ptr = block + 8; word 0 = block size - 8 (sqlite's sizes)
//   newarray   ptr = block + 8; word 0 = n > 0 and n divides block size - 8:
//              new T[n] of a T with a destructor (the array cookie)
//   multipleinheritance  ptr = block + 8k (k >= 1), and both the block's
//              first word and the word at ptr are vtable addresses: a
//              pointer to a secondary base class sub-object. "Vtable
//              address" as memcheck decides it (aligned_ptr_above_page0_is_
//              vtable_addr): it lies in a readable file mapping, and among
//              the first 20 words from there, 2 non-null words point into
//              executable file mappings before any other non-null word
//              (FileMappingVtables, from /proc/self/maps).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reachability.hpp"

namespace memtrail::preload {

// True when `pointer` (inside `block`, not its start) matches one of the
// heuristics above (multipleinheritance only with `vtables`). Reads the
// block's words through `reader`.
bool interior_pointer_is_intended(std::uint64_t pointer, const HeapBlock& block,
                                  MemoryReader& reader, const VtableOracle* vtables = nullptr);

// memcheck's vtable test over the file mappings of /proc/self/maps text.
class FileMappingVtables final : public VtableOracle {
 public:
  explicit FileMappingVtables(const std::string& maps);
  bool is_vtable(std::uint64_t address, MemoryReader& reader) const override;

 private:
  struct Mapping {
    std::uint64_t begin, end;
    bool readable, executable;
  };
  const Mapping* find(std::uint64_t address) const;
  std::vector<Mapping> mappings_;  // file-backed only, by address
};

}  // namespace memtrail::preload
