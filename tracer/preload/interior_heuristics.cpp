// Valgrind's leak-check heuristics for interior pointers (see the header).
#include "interior_heuristics.hpp"

#include <algorithm>
#include <cstdlib>

namespace memtrail::preload {

namespace {

constexpr int kVtableWords = 20;  // memcheck's VTABLE_MAX_CHECK

// multipleinheritance: the block's first word and the word `pointer` points
// at are both vtable addresses.
bool secondary_base_pointer(std::uint64_t pointer, const HeapBlock& block, MemoryReader& reader,
                            const VtableOracle& vtables) {
  const std::uint64_t offset = pointer - block.address;
  if (offset % 8 != 0 || offset + 8 > block.size) return false;
  std::uint64_t first = 0, inner = 0;
  if (reader.read(static_cast<std::uintptr_t>(block.address), &first, 8) != 8 ||
      reader.read(static_cast<std::uintptr_t>(pointer), &inner, 8) != 8)
    return false;
  return vtables.is_vtable(inner, reader) && vtables.is_vtable(first, reader);
}

}  // namespace

FileMappingVtables::FileMappingVtables(const std::string& maps) {
  // "begin-end perms offset dev inode path": file-backed when inode != 0.
  for (std::size_t at = 0; at < maps.size();) {
    std::size_t newline = maps.find('\n', at);
    if (newline == std::string::npos) newline = maps.size();
    const char* line = maps.c_str() + at;
    char* end = nullptr;
    Mapping m{};
    m.begin = std::strtoull(line, &end, 16);
    m.end = std::strtoull(end + 1, &end, 16);
    const char* perms = end + 1;
    m.readable = perms[0] == 'r';
    m.executable = perms[2] == 'x';
    std::strtoull(perms + 5, &end, 16);  // offset
    while (*end == ' ') ++end;
    while (*end != ' ' && *end != '\n' && *end != '\0') ++end;  // dev
    unsigned long long inode = std::strtoull(end, nullptr, 10);
    if (inode != 0) mappings_.push_back(m);
    at = newline + 1;
  }
}

const FileMappingVtables::Mapping* FileMappingVtables::find(std::uint64_t address) const {
  auto it = std::upper_bound(mappings_.begin(), mappings_.end(), address,
                             [](std::uint64_t a, const Mapping& m) { return a < m.begin; });
  if (it == mappings_.begin()) return nullptr;
  --it;
  return address < it->end ? &*it : nullptr;
}

bool FileMappingVtables::is_vtable(std::uint64_t address, MemoryReader& reader) const {
  if (address < 4096 || address % 8 != 0) return false;
  const Mapping* table = find(address);
  if (table == nullptr || !table->readable) return false;
  std::uint64_t words[kVtableWords] = {};
  std::size_t want = std::min<std::uint64_t>(sizeof words, (table->end - address) & ~7ull);
  std::size_t got = reader.read(static_cast<std::uintptr_t>(address), words, want) / 8;
  int functions = 0;
  for (std::size_t i = 0; i < got; ++i) {
    if (words[i] == 0) continue;  // a null slot can happen in a vtable
    const Mapping* code = find(words[i]);
    if (code == nullptr || !code->executable) return false;
    if (++functions == 2) return true;
  }
  return false;
}

bool interior_pointer_is_intended(std::uint64_t pointer, const HeapBlock& block,
                                  MemoryReader& reader, const VtableOracle* vtables) {
  const std::uint64_t offset = pointer - block.address;
  if (vtables != nullptr && offset >= 8 && secondary_base_pointer(pointer, block, reader, *vtables))
    return true;
  if (offset != 8 && offset != 24) return false;  // the other heuristics' places
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
