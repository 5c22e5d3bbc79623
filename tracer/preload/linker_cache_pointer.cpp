// ld.so's pointer to its ld.so.cache mapping (linker_cache_pointer.hpp).
#include "linker_cache_pointer.hpp"

#include <algorithm>

namespace memtrail::preload {
namespace {

constexpr std::uint64_t kPage = 4096;
// How far from the size word ld.so's pointers may lie: dl-cache.c defines
// cachesize, cache_new and cache together; their order is the compiler's.
constexpr std::uintptr_t kNeighbourhood = 16;

// The addresses of the words of `data` equal to `value` (at most two are
// kept: more than one already means "not found").
std::vector<std::uintptr_t> words_equal_to(std::span<const MemoryRange> data, std::uint64_t value,
                                           MemoryReader& reader) {
  std::vector<std::uintptr_t> found;
  std::vector<std::uint64_t> words;
  for (const MemoryRange& r : data) {
    const std::uintptr_t begin = (r.begin + 7) & ~std::uintptr_t{7};
    if (r.end < begin + 8) continue;
    words.assign((r.end - begin) / 8, 0);
    const std::size_t got = reader.read(begin, words.data(), words.size() * 8) / 8;
    for (std::size_t i = 0; i < got && found.size() < 2; ++i)
      if (words[i] == value) found.push_back(begin + i * 8);
  }
  return found;
}

bool inside(std::span<const MemoryRange> data, std::uintptr_t at) {
  return std::any_of(data.begin(), data.end(),
                     [at](const MemoryRange& r) { return at >= r.begin && at + 8 <= r.end; });
}

}  // namespace

std::vector<MemoryRange> linker_cache_pointers(std::span<const MemoryRange> linker_data,
                                               std::uint64_t cache_size, MemoryReader& reader) {
  std::vector<MemoryRange> pointers;
  if (cache_size == 0) return pointers;
  const std::vector<std::uintptr_t> size_words = words_equal_to(linker_data, cache_size, reader);
  if (size_words.size() != 1) return pointers;
  const std::uintptr_t size_at = size_words[0];
  for (std::uintptr_t at = size_at - kNeighbourhood; at <= size_at + kNeighbourhood; at += 8) {
    std::uint64_t value = 0;
    if (at == size_at || !inside(linker_data, at) || reader.read(at, &value, 8) != 8) continue;
    if (value != 0 && value % kPage == 0) pointers.push_back({at, at + 8});
  }
  return pointers;
}

}  // namespace memtrail::preload
