// gui_churn: the allocation-churn program of the GUI benchmark, the one the
// heaptrack_gui anchor was measured on (shared/reference/heaptrack-gui).
//
//   gui_churn ALLOCATIONS [PATHS]
//
// 2 threads each make ALLOCATIONS/2 mallocs of 16 B..8 KiB (log-uniform,
// fixed-seed). Each new block goes into a random slot of its thread's
// 1024-slot table and frees the block it replaces, so frees come in random
// order and the live set stays bounded (~2 x 1024 blocks) at any N.
//
// Stacks. Without PATHS each allocation comes from call depth 2..20 through
// one recursive function: ~20 distinct stacks, as in the anchor. With PATHS
// (1..131072, e.g. 115000) each allocation takes one of PATHS call paths
// 17 frames deep, picked at random: a path is a number whose bits choose,
// level by level, between two call sites, so up to PATHS distinct stacks
// (4e5 allocations over 115000 paths reach ~1.1e5 distinct stacks, the
// anchor's many-stacks trace).
//
// Then main leaks 100 blocks of 1000 B from one site, so the leaks view has
// a row. Deterministic: one line with a checksum, the same on every run. It
// is not samples/churn: that one has 8 B..64 KiB sizes and ring-order frees.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "workloads/workload.hpp"

namespace {

constexpr int kSlots = 1024;

using workload::Rng;  // splitmix64, fixed seed: every run allocates the same

// 16 B..8 KiB, log-uniform, so small blocks dominate as in real code.
std::size_t pick_size(Rng& rng) {
  std::uint64_t r = rng.next();
  unsigned shift = 4 + static_cast<unsigned>(r % 10);  // 2^4 .. 2^13
  std::size_t size = std::size_t{1} << shift;
  size -= (r >> 8) % (size / 2);  // (size/2, size]
  return size < 16 ? 16 : size;
}

// The allocation site. The empty asm keeps the compiler from merging or
// dropping the frames above it.
__attribute__((noinline)) void* leaf_alloc(std::size_t size) {
  void* p = std::malloc(size);
  workload::touch(p);
  return p;
}

// Few stacks: depth frames of descend() over leaf_alloc.
__attribute__((noinline)) void* descend(int depth, std::size_t size) {
  void* p = depth <= 1 ? leaf_alloc(size) : descend(depth - 1, size);
  asm volatile("" ::: "memory");
  return p;
}

// Many stacks: step<L> calls step<L - 1> from one of two call sites, picked
// by bit L of `path`, so each path number below 2^kPathLevels is its own
// chain of return addresses. Templates, not recursion: heaptrack 1.4's
// interpreter blew up (18 GiB, bad_alloc) on a recursive version.
constexpr int kPathLevels = 17;

template <int L>
__attribute__((noinline)) void* step(std::uint64_t path, std::size_t size) {
  void* p;
  if ((path >> L) & 1) {
    p = step<L - 1>(path, size);
    asm volatile("" ::: "memory");
  } else {
    p = step<L - 1>(path, size);
    asm volatile("nop" ::: "memory");  // unlike the other branch: keeps two call sites
  }
  return p;
}
template <>
__attribute__((noinline)) void* step<-1>(std::uint64_t, std::size_t size) {
  return leaf_alloc(size);
}

struct Totals {
  std::uint64_t bytes = 0;
  std::uint64_t checksum = 0;
};

void churn_thread(std::uint64_t seed, long allocations, std::uint64_t paths, Totals* out) {
  Rng rng{seed};
  void* slots[kSlots] = {};
  Totals t;
  for (long i = 0; i < allocations; ++i) {
    std::size_t size = pick_size(rng);
    std::uint64_t r = rng.next();
    void* p;
    if (paths == 0) {
      int depth = 2 + static_cast<int>(r % 19);  // 2..20 frames
      p = descend(depth - 1, size);
    } else {
      p = step<kPathLevels - 1>(r % paths, size);
    }
    std::uint64_t slot = (r >> 32) % kSlots;
    std::free(slots[slot]);  // free(nullptr) while the table fills
    slots[slot] = p;
    t.bytes += size;
    t.checksum = t.checksum * 31 + size + slot;
  }
  for (void* p : slots) std::free(p);
  *out = t;
}

// The one leak site; the pointers are dropped on purpose.
__attribute__((noinline)) void leak_site() {
  for (int i = 0; i < 100; ++i) static_cast<volatile char*>(leaf_alloc(1000))[1] = 0;
}

bool parse(const char* text, long* value) {
  char* end = nullptr;
  *value = std::strtol(text, &end, 10);
  return *text != '\0' && *end == '\0' && *value >= 0;
}

}  // namespace

int main(int argc, char** argv) {
  long allocations = 0, paths = 0;
  if (argc < 2 || argc > 3 || !parse(argv[1], &allocations) ||
      (argc == 3 && (!parse(argv[2], &paths) || paths > (1L << kPathLevels)))) {
    std::fprintf(stderr, "usage: gui_churn ALLOCATIONS [PATHS] (integers, PATHS <= 131072)\n");
    return 2;
  }
  auto n_paths = static_cast<std::uint64_t>(paths);
  Totals first, second;
  std::thread a(churn_thread, 0x6d656d747261696cull, allocations / 2, n_paths, &first);
  std::thread b(churn_thread, 0x636875726e000002ull, allocations - allocations / 2, n_paths,
                &second);
  a.join();
  b.join();
  leak_site();
  std::printf("gui_churn: %ld allocations, %ld paths, %llu bytes, checksum %016llx\n", allocations,
              paths, static_cast<unsigned long long>(first.bytes + second.bytes),
              static_cast<unsigned long long>(first.checksum ^ second.checksum));
  return 0;
}
