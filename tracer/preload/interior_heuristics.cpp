// Valgrind's leak-check heuristics for interior pointers (see the header).
#include "interior_heuristics.hpp"

namespace memtrail::preload {

bool interior_pointer_is_intended(std::uint64_t pointer, const HeapBlock& block,
                                  MemoryReader& reader) {
  const std::uint64_t offset = pointer - block.address;
  if (offset != 8 && offset != 24) return false;  // every heuristic's place
  if (block.size < offset) return false;
  std::uint64_t words[2] = {0, 0};
  std::size_t need = offset == 24 ? 16 : 8;
  if (reader.read(static_cast<std::uintptr_t>(block.address), words, need) != need) return false;
  if (offset == 24) {  // stdstring: length, capacity, refcount, chars, NUL
    const std::uint64_t length = words[0], capacity = words[1];
    return capacity < block.size && 3 * 8 + capacity + 1 == block.size && length <= capacity;
  }
  const std::uint64_t first = words[0];
  if (first == 0) return false;
  if (block.size - 8 == first) return true;  // length64
  return (block.size - 8) % first == 0;      // newarray: first = element count
}

}  // namespace memtrail::preload
