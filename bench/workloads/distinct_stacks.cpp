// distinct_stacks: many distinct deep call stacks from one thread, the
// shape where interning stacks, not unwinding repeats, sets the tracer's cost.
//
//   distinct_stacks STACKS [DEPTH [ALLOCATIONS]]
//
// Each allocation takes one of STACKS call paths, picked at random (fixed
// seed), DEPTH frames deep (default 27) below run(): the outer DEPTH - L
// frames are one fixed chain, the inner L = ceil(log2 STACKS) frames each
// pick one of two call sites by one bit of the path number, so the stacks
// form a binary tree: about 2 * STACKS trie nodes, the most a program with
// that many distinct stacks can need per stack. ALLOCATIONS (default
// 4 * STACKS) blocks of 16..256 B each replace (and free) a random slot of a
// 1024-slot table, so the live set stays small and every allocation is
// followed by a free: about 2 * ALLOCATIONS events. With the default,
// 1 - e^-4 = 98 % of the paths are taken; a quarter of the allocations come
// from a stack not seen before, and the rest repeat a stack last seen
// thousands of allocations earlier (beyond any small per-thread cache).
//
// Deterministic: one line with a checksum, the same on every run.
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "workload.hpp"

namespace {

constexpr int kMaxBranchLevels = 24;  // up to 2^24 stacks
constexpr int kMaxPlainFrames = 40;
constexpr int kSlots = 1024;

using workload::Rng;

__attribute__((noinline)) void* leaf_alloc(std::size_t size) {
  void* p = std::malloc(size);
  workload::touch(p);
  return p;
}

// Branching level L: bit L of `path` picks one of two call sites. Templates,
// not recursion, so each level has its own return addresses.
template <int L>
__attribute__((noinline)) void* branch(std::uint64_t path, std::size_t size) {
  void* p;
  if ((path >> L) & 1) {
    p = branch<L - 1>(path, size);
    asm volatile("" ::: "memory");
  } else {
    p = branch<L - 1>(path, size);
    asm volatile("nop" ::: "memory");  // keeps two distinct call sites
  }
  return p;
}
template <>
__attribute__((noinline)) void* branch<-1>(std::uint64_t, std::size_t size) {
  return leaf_alloc(size);
}

using Entry = void* (*)(std::uint64_t, std::size_t);
template <std::size_t... L>
constexpr auto make_branch_table(std::index_sequence<L...>) {
  return std::array<Entry, sizeof...(L)>{&branch<static_cast<int>(L) - 1>...};
}

// The fixed outer chain: plain<K> calls plain<K - 1>, plain<0> enters the
// branching levels.
struct Call {
  Entry entry;
  std::uint64_t path;
  std::size_t size;
};
template <int K>
__attribute__((noinline)) void* plain(const Call& c) {
  void* p = plain<K - 1>(c);
  asm volatile("" ::: "memory");
  return p;
}
template <>
__attribute__((noinline)) void* plain<0>(const Call& c) {
  void* p = c.entry(c.path, c.size);
  asm volatile("" ::: "memory");
  return p;
}
using PlainEntry = void* (*)(const Call&);
template <std::size_t... K>
constexpr auto make_plain_table(std::index_sequence<K...>) {
  return std::array<PlainEntry, sizeof...(K)>{&plain<static_cast<int>(K)>...};
}

bool parse(const char* text, long* value) {
  char* end = nullptr;
  *value = std::strtol(text, &end, 10);
  return *text != '\0' && *end == '\0' && *value > 0;
}

__attribute__((noinline)) std::uint64_t run(long stacks, int depth, long allocations) {
  static constexpr auto kBranch =
      make_branch_table(std::make_index_sequence<kMaxBranchLevels + 1>{});
  static constexpr auto kPlain = make_plain_table(std::make_index_sequence<kMaxPlainFrames>{});
  int levels = 0;
  while ((1L << levels) < stacks) ++levels;
  // branch<levels - 1> .. branch<-1> and leaf_alloc are levels + 2 frames,
  // plain<k> .. plain<0> are k + 1.
  int plain_frames = depth - levels - 2;
  Entry entry = kBranch[levels];
  PlainEntry outer = kPlain[plain_frames - 1];
  Rng rng{0x64697374696e6374ull};
  void* slots[kSlots] = {};
  std::uint64_t checksum = 0;
  for (long i = 0; i < allocations; ++i) {
    std::uint64_t r = rng.next();
    std::size_t size = 16 + (r >> 40) % 241;
    Call c{entry, (r & 0xffffffffu) % static_cast<std::uint64_t>(stacks), size};
    void* p = outer(c);
    std::uint64_t slot = (r >> 32) % kSlots;
    std::free(slots[slot]);
    slots[slot] = p;
    checksum = checksum * 31 + size + slot;
  }
  for (void* p : slots) std::free(p);
  return checksum;
}

}  // namespace

int main(int argc, char** argv) {
  long stacks = 0, depth = 27, allocations = 0;
  if (argc < 2 || argc > 4 || !parse(argv[1], &stacks) || (argc > 2 && !parse(argv[2], &depth)) ||
      (argc > 3 && !parse(argv[3], &allocations)) || stacks > (1L << kMaxBranchLevels)) {
    std::fprintf(stderr, "usage: distinct_stacks STACKS [DEPTH [ALLOCATIONS]] (STACKS <= 2^24)\n");
    return 2;
  }
  int levels = 0;
  while ((1L << levels) < stacks) ++levels;
  if (depth < levels + 3 || depth > levels + 2 + kMaxPlainFrames) {
    std::fprintf(stderr, "distinct_stacks: DEPTH must be %d..%d for %ld stacks\n", levels + 3,
                 levels + 2 + kMaxPlainFrames, stacks);
    return 2;
  }
  if (argc < 4) allocations = 4 * stacks;
  std::uint64_t sum = run(stacks, static_cast<int>(depth), allocations);
  std::printf("distinct_stacks: %ld stacks, depth %ld, %ld allocations, checksum %016llx\n", stacks,
              depth, allocations, static_cast<unsigned long long>(sum));
  return 0;
}
