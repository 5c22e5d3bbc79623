// The exit-time classifier on real memory: blocks are real heap blocks, roots
// are real arrays, and unreadable memory is a real PROT_NONE mapping.
#include "reachability.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "linker_cache_pointer.hpp"

namespace memtrail::preload {
namespace {

using u64 = std::uint64_t;

struct Fixture {
  std::vector<void*> owned;
  std::vector<HeapBlock> blocks;
  ~Fixture() {
    for (void* p : owned) std::free(p);
  }
  // A zeroed block of `words` pointer-sized words; returns its index.
  std::size_t add(std::size_t words) {
    void* p = std::calloc(words, sizeof(void*));
    owned.push_back(p);
    blocks.push_back({.address = reinterpret_cast<u64>(p), .size = words * sizeof(void*)});
    return blocks.size() - 1;
  }
  void** words(std::size_t block) { return static_cast<void**>(owned[block]); }
  void link(std::size_t from, std::size_t word, std::size_t to, std::size_t offset = 0) {
    words(from)[word] = static_cast<char*>(owned[to]) + offset;
  }
};

MemoryRange range_of(const void* p, std::size_t bytes) {
  auto begin = reinterpret_cast<std::uintptr_t>(p);
  return {begin, begin + bytes};
}

TEST(Reachability, ListHeadIsDirectRestIndirect) {
  Fixture f;
  // Allocate the tail first so the head is not first in address order: the
  // clique rule must still pick the head as the one direct leak.
  std::vector<std::size_t> nodes;
  for (int i = 0; i < 10; ++i) nodes.push_back(f.add(4));
  for (int i = 9; i > 0; --i) f.link(nodes[i], 0, nodes[i - 1]);  // nodes[9] is the head
  SelfMemoryReader reader;
  auto classes = classify_blocks(f.blocks, {}, reader);
  int direct = 0, indirect = 0;
  for (std::size_t i = 0; i < classes.size(); ++i) {
    if (classes[i] == LeakClass::direct) {
      ++direct;
      EXPECT_EQ(i, nodes[9]);
    }
    if (classes[i] == LeakClass::indirect) ++indirect;
  }
  EXPECT_EQ(direct, 1);
  EXPECT_EQ(indirect, 9);
}

// Valgrind's "possibly lost": a root's interior pointer makes a block
// possible, and what it points to (even from its start) possible too.
TEST(Reachability, InteriorPointersFromRootsMakeChainsPossible) {
  Fixture f;
  std::size_t a = f.add(4), b = f.add(4), c = f.add(4), lost = f.add(4);
  f.link(a, 2, b, 12);  // interior pointer into b
  f.link(b, 3, c);
  f.link(lost, 0, a);  // a leaked block pointing at reachable ones changes nothing
  void* root[2] = {static_cast<char*>(f.owned[a]) + 31, nullptr};  // last byte of a
  MemoryRange roots[] = {range_of(root, sizeof root)};
  SelfMemoryReader reader;
  auto classes = classify_blocks(f.blocks, roots, reader);
  EXPECT_EQ(classes[a], LeakClass::possible);
  EXPECT_EQ(classes[b], LeakClass::possible);
  EXPECT_EQ(classes[c], LeakClass::possible);
  EXPECT_EQ(classes[lost], LeakClass::direct);
}

// A possible block that a start pointer from a reachable block reaches later
// rises to reachable, and the blocks it points to from their start rise too.
TEST(Reachability, StartPointerFromReachableBlockLiftsPossibleChain) {
  Fixture f;
  std::size_t a = f.add(4), b = f.add(4), c = f.add(4), d = f.add(4);
  f.link(b, 0, c);     // b -> c (start)
  f.link(b, 1, d, 8);  // b -> d (interior; d's word 0 is 0: no heuristic)
  f.link(a, 3, b);     // a -> b (start)
  void* root[2] = {static_cast<char*>(f.owned[b]) + 16, f.owned[a]};  // interior first
  MemoryRange roots[] = {range_of(root, sizeof root)};
  SelfMemoryReader reader;
  auto classes = classify_blocks(f.blocks, roots, reader);
  EXPECT_EQ(classes[a], LeakClass::reachable);
  EXPECT_EQ(classes[b], LeakClass::reachable);
  EXPECT_EQ(classes[c], LeakClass::reachable);
  EXPECT_EQ(classes[d], LeakClass::possible);
}

// memcheck's default heuristics: stdstring (+24), length64 and newarray (+8)
// interior pointers count as start pointers when the block's words fit.
TEST(Reachability, ValgrindHeuristicsMakeIntendedInteriorPointersReachable) {
  Fixture f;
  std::size_t str = f.add(6), len = f.add(5), arr = f.add(7), plain = f.add(7);
  f.blocks[str].size = 24 + 15 + 1;  // length 10, capacity 15: a COW string rep
  f.words(str)[0] = reinterpret_cast<void*>(10);
  f.words(str)[1] = reinterpret_cast<void*>(15);
  f.words(len)[0] = reinterpret_cast<void*>(32);   // 40 B block, 32 = 40 - 8
  f.words(arr)[0] = reinterpret_cast<void*>(3);    // 56 B: 3 elements of 16 B
  f.words(plain)[0] = reinterpret_cast<void*>(5);  // 48 is no multiple of 5
  void* root[4] = {static_cast<char*>(f.owned[str]) + 24, static_cast<char*>(f.owned[len]) + 8,
                   static_cast<char*>(f.owned[arr]) + 8, static_cast<char*>(f.owned[plain]) + 8};
  MemoryRange roots[] = {range_of(root, sizeof root)};
  SelfMemoryReader reader;
  auto classes = classify_blocks(f.blocks, roots, reader);
  EXPECT_EQ(classes[str], LeakClass::reachable);
  EXPECT_EQ(classes[len], LeakClass::reachable);
  EXPECT_EQ(classes[arr], LeakClass::reachable);
  EXPECT_EQ(classes[plain], LeakClass::possible);
}

TEST(Reachability, OnePastTheEndAndExcludedOffsetDoNotCount) {
  Fixture f;
  std::size_t a = f.add(4), b = f.add(4);
  f.blocks[b].excluded_offset = 24;
  void* root[2] = {static_cast<char*>(f.owned[a]) + 32, static_cast<char*>(f.owned[b]) + 24};
  MemoryRange roots[] = {range_of(root, sizeof root)};
  SelfMemoryReader reader;
  auto classes = classify_blocks(f.blocks, roots, reader);
  // a + 32 may be b itself if the heap placed them back to back; only assert
  // on what is unambiguous.
  if (reinterpret_cast<u64>(root[0]) != f.blocks[b].address) {
    EXPECT_EQ(classes[a], LeakClass::direct);
  }
  EXPECT_EQ(classes[b], LeakClass::direct);
}

TEST(Reachability, CycleHasExactlyOneDirectLeak) {
  Fixture f;
  std::size_t a = f.add(2), b = f.add(2), c = f.add(2);
  f.link(a, 0, b);
  f.link(b, 0, c);
  f.link(c, 0, a);
  SelfMemoryReader reader;
  auto classes = classify_blocks(f.blocks, {}, reader);
  int direct = 0;
  for (auto k : classes) direct += k == LeakClass::direct;
  EXPECT_EQ(direct, 1);
  for (auto k : classes) EXPECT_NE(k, LeakClass::reachable);
}

// The leader of a leaked cycle is its first-allocated block (its age), not
// its lowest-addressed one: glibc's chunk reuse moves addresses with the
// working directory's length; Valgrind's rising addresses follow age.
TEST(Reachability, CycleLeaderIsTheOldestBlockWhateverItsAddress) {
  for (int oldest = 0; oldest < 3; ++oldest) {
    Fixture f;
    std::size_t n[3] = {f.add(2), f.add(2), f.add(2)};
    for (int i = 0; i < 3; ++i) f.link(n[i], 0, n[(i + 1) % 3]);
    for (int i = 0; i < 3; ++i) f.blocks[n[i]].age = i == oldest ? 1 : 10 + i;
    SelfMemoryReader reader;
    auto classes = classify_blocks(f.blocks, {}, reader);
    for (int i = 0; i < 3; ++i)
      EXPECT_EQ(classes[n[i]], i == oldest ? LeakClass::direct : LeakClass::indirect)
          << "oldest " << oldest << ", block " << i;
  }
}

TEST(Reachability, ForcedBlocksAreRootsToo) {
  Fixture f;
  std::size_t dtv = f.add(2), tls = f.add(2);
  f.link(dtv, 1, tls);
  f.blocks[dtv].force_reachable = true;
  SelfMemoryReader reader;
  auto classes = classify_blocks(f.blocks, {}, reader);
  EXPECT_EQ(classes[dtv], LeakClass::reachable);
  EXPECT_EQ(classes[tls], LeakClass::reachable);
}

// ld.so's symbol-version table of a dlopen'd object (link_map::l_versions,
// struct r_found_version {name, hash, hidden, filename}, entries 0 and 1
// unused): the word at 8 of an entry holds the version name's ELF hash,
// which reads as an address in a non-PIE program's heap (GLIBC_2.2.5's is
// 0x09691a75). It covered ctypes_lost's leak (issue 27): an integer, not a
// pointer, whatever block it falls in. The entry's other words are followed.
TEST(Reachability, LinkerVersionHashesAreNoPointers) {
  Fixture f;
  const std::size_t versions = f.add(3 * 4);  // four 24-byte entries
  const std::size_t by_hash = f.add(4), by_name = f.add(4);
  f.blocks[versions].force_reachable = true;
  f.link(versions, 2 * 3 + 1, by_hash, 8);  // entry 2's hash word
  f.link(versions, 3 * 3 + 0, by_name, 8);  // entry 3's name
  SelfMemoryReader reader;
  auto classes = classify_blocks(f.blocks, {}, reader);
  EXPECT_EQ(classes[versions], LeakClass::reachable);
  EXPECT_EQ(classes[by_hash], LeakClass::direct);
  EXPECT_EQ(classes[by_name], LeakClass::possible);
  // Entries 0 and 1 in use: no version table, the hash word is followed.
  f.words(versions)[0] = f.owned[by_name];
  classes = classify_blocks(f.blocks, {}, reader);
  EXPECT_EQ(classes[by_hash], LeakClass::possible);
}

// ld.so's dl-cache.c keeps the cache file's size and two addresses of its
// mapping side by side; _dl_unload_cache unmaps it and clears one of them
// only. The other, an address of a mapping gone since, fell inside a
// 128 KiB leak that glibc mapped there (issue 27): it is found by the size
// word beside it and left out of the roots.
TEST(Reachability, LinkersCacheAddressIsFoundBesideTheCacheSize) {
  constexpr std::uint64_t kCacheSize = 67631;
  const std::uint64_t cache = 0x7f0012345000;
  // cachesize, cache_new, cache (NULL once unmapped), as in glibc 2.36's
  // ld.so; before them a malloc'd array's address, no page address: kept.
  std::uint64_t data[8] = {0x55, 0x7f0011112230, kCacheSize, cache, 0, 0x1234, 0, 0};
  MemoryRange linker_data[] = {range_of(data, sizeof data)};
  SelfMemoryReader reader;
  auto found = linker_cache_pointers(linker_data, kCacheSize, reader);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].begin, reinterpret_cast<std::uintptr_t>(&data[3]));
  EXPECT_EQ(found[0].end, found[0].begin + 8);
  // While the cache is mapped both addresses hold it.
  data[4] = cache;
  EXPECT_EQ(linker_cache_pointers(linker_data, kCacheSize, reader).size(), 2u);
  // No word holds the size (the cache never loaded), or two do: nothing found.
  EXPECT_TRUE(linker_cache_pointers(linker_data, kCacheSize + 8, reader).empty());
  data[7] = kCacheSize;
  EXPECT_TRUE(linker_cache_pointers(linker_data, kCacheSize, reader).empty());
}

// glibc's LC_CTYPE locale data: struct __locale_data (56 bytes, nstrings at
// 48, private at 32) with values[nstrings], then its struct lc_ctype_data
// (fcts, then the digits' widths in bytes: 0x01010101 in a UTF-8 locale),
// which `private` points at. The widths read as an address where a non-PIE
// program's heap lies low, and made a python3 leak possibly lost (issue
// 27). The words past `fcts` are no pointer; `fcts` is.
TEST(Reachability, LocaleDigitWidthsAreNoPointers) {
  Fixture f;
  constexpr std::size_t kValues = 4;
  const std::size_t locale = f.add(7 + kValues + 3);
  const std::size_t by_widths = f.add(4), by_fcts = f.add(4);
  f.blocks[locale].force_reachable = true;
  void** words = f.words(locale);
  words[4] = &words[7 + kValues];  // private: the lc_ctype_data
  words[6] = reinterpret_cast<void*>(kValues);
  f.link(locale, 7 + kValues + 2, by_widths, 8);  // the widths' last word
  f.link(locale, 7 + kValues, by_fcts, 8);        // fcts
  SelfMemoryReader reader;
  const ClassifyOptions glibc{.glibc_chunks = true};
  auto classes = classify_blocks(f.blocks, {}, reader, glibc);
  EXPECT_EQ(classes[by_widths], LeakClass::direct);
  EXPECT_EQ(classes[by_fcts], LeakClass::possible);
  // Another shape (private elsewhere): the word is followed.
  words[4] = &words[6];
  classes = classify_blocks(f.blocks, {}, reader, glibc);
  EXPECT_EQ(classes[by_widths], LeakClass::possible);
}

TEST(Reachability, UnreadablePagesInARootAreSkipped) {
  constexpr std::size_t kPage = 4096;
  auto* area = static_cast<char*>(
      mmap(nullptr, 3 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(area, MAP_FAILED);
  ASSERT_EQ(mprotect(area + kPage, kPage, PROT_NONE), 0);
  Fixture f;
  std::size_t before = f.add(2), after = f.add(2);
  std::memcpy(area + 8, &f.owned[before], sizeof(void*));
  std::memcpy(area + 2 * kPage + 16, &f.owned[after], sizeof(void*));
  MemoryRange roots[] = {range_of(area, 3 * kPage)};
  SelfMemoryReader reader;
  auto classes = classify_blocks(f.blocks, roots, reader);
  EXPECT_EQ(classes[before], LeakClass::reachable);
  EXPECT_EQ(classes[after], LeakClass::reachable);
  munmap(area, 3 * kPage);
}

TEST(Reachability, SubtractRanges) {
  MemoryRange ranges[] = {{100, 200}, {300, 400}};
  MemoryRange holes[] = {{150, 160}, {350, 500}, {0, 100}};
  auto left = subtract_ranges(ranges, holes);
  ASSERT_EQ(left.size(), 3u);
  EXPECT_EQ(left[0].begin, 100u);
  EXPECT_EQ(left[0].end, 150u);
  EXPECT_EQ(left[1].begin, 160u);
  EXPECT_EQ(left[1].end, 200u);
  EXPECT_EQ(left[2].begin, 300u);
  EXPECT_EQ(left[2].end, 350u);
}

}  // namespace
}  // namespace memtrail::preload

namespace memtrail::preload {
namespace {

// glibc's chunk layout: the word before a block holds its chunk size; the
// next chunk's header sits 8 bytes before the end of the usable size.
TEST(Reachability, GlibcNextChunkHeaderIsNotAnInteriorPointer) {
  // 24 requested bytes: a 32-byte chunk whose last usable 8 bytes are the
  // next chunk's prev_size field, i.e. offset 16 is the next chunk's header.
  void* p = std::malloc(24);
  std::memset(p, 0, 24);  // no first word that a heuristic could take
  SelfMemoryReader reader;
  ASSERT_EQ(glibc_next_header_offset(reinterpret_cast<std::uint64_t>(p), reader), 16u);
  HeapBlock block{.address = reinterpret_cast<std::uint64_t>(p), .size = 24};
  void* header_pointer[1] = {static_cast<char*>(p) + 16};
  void* interior_pointer[1] = {static_cast<char*>(p) + 8};
  MemoryRange header_root[] = {{reinterpret_cast<std::uintptr_t>(header_pointer),
                                reinterpret_cast<std::uintptr_t>(header_pointer + 1)}};
  MemoryRange interior_root[] = {{reinterpret_cast<std::uintptr_t>(interior_pointer),
                                  reinterpret_cast<std::uintptr_t>(interior_pointer + 1)}};
  ClassifyOptions glibc{.glibc_chunks = true};
  EXPECT_EQ(classify_blocks(std::span(&block, 1), header_root, reader, glibc)[0],
            LeakClass::direct);
  EXPECT_EQ(classify_blocks(std::span(&block, 1), header_root, reader)[0], LeakClass::possible);
  EXPECT_EQ(classify_blocks(std::span(&block, 1), interior_root, reader, glibc)[0],
            LeakClass::possible);
  std::free(p);
  // An unmapped "block" (a stale entry) reads as unknown, never faults.
  EXPECT_EQ(glibc_next_header_offset(8, reader), ~0ull);
}

}  // namespace
}  // namespace memtrail::preload

// The main thread's static TLS range must not reach below glibc's allocation
// of it: _dl_get_tls_static_info's size counts the descriptor above the
// thread pointer too. Below the allocation lies ld.so's own memory, whose
// stale addresses made plugin leaks "reachable".
TEST(Reachability, StaticTlsRangeStaysInsideTheThreadsTlsMapping) {
  using Fn = void (*)(std::size_t*, std::size_t*);
  auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info"));
  if (fn == nullptr) GTEST_SKIP() << "not glibc";
  std::size_t size = 0, align = 0;
  fn(&size, &align);
  auto tp = reinterpret_cast<std::uintptr_t>(__builtin_thread_pointer());
  using memtrail::preload::kGlibcTcbSize;
  memtrail::preload::MemoryRange tls =
      memtrail::preload::glibc_static_tls_range(tp, size, kGlibcTcbSize);
  EXPECT_EQ(tls.end - tp, kGlibcTcbSize);
  EXPECT_EQ(tp - tls.begin, size - kGlibcTcbSize);
  // glibc allocates the main thread's TLS from fresh pages (ld.so's minimal
  // malloc at start-up), so the block's start is the mapping's start or
  // above it, and the mapping holds the whole range.
  std::ifstream maps("/proc/self/maps");
  std::string line;
  bool found = false;
  while (std::getline(maps, line)) {
    std::uintptr_t begin = std::stoull(line, nullptr, 16);
    std::uintptr_t end = std::stoull(line.substr(line.find('-') + 1), nullptr, 16);
    if (tp < begin || tp >= end) continue;
    found = true;
    EXPECT_GE(tls.begin, begin) << line;
    EXPECT_LE(tls.end, end) << line;
  }
  EXPECT_TRUE(found);
}
