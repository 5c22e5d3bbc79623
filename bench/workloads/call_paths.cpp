// call_paths: allocations 2..30 frames deep through several paths, by
// recursion. Each allocation picks a depth (1..29 recursive frames over the
// allocation site) and one of PATHS path numbers; at each level one bit of
// the path picks one of two recursive call sites, so the program has about
// 29 * PATHS distinct stacks, each seen again and again. Blocks of 16 B..
// 8 KiB replace (and free) a random slot of a 1024-slot table.
//
// Built twice (bench/CMakeLists.txt): call_paths with frame pointers and
// call_paths_nofp without, so the unwinder's two paths are both measured.
//
//   call_paths ALLOCATIONS [PATHS]
#include "workload.hpp"

namespace {

constexpr int kSlots = 1024;

__attribute__((noinline)) void* leaf_alloc(std::size_t size) {
  void* p = std::malloc(size);
  workload::touch(p);
  return p;
}

__attribute__((noinline)) void* descend(int depth, std::uint64_t path, std::size_t size) {
  if (depth <= 1) return leaf_alloc(size);
  void* p;
  if ((path >> (depth % 16)) & 1) {
    p = descend(depth - 1, path, size);
    asm volatile("" ::: "memory");
  } else {
    p = descend(depth - 1, path, size);
    asm volatile("nop" ::: "memory");  // keeps two distinct call sites
  }
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "call_paths ALLOCATIONS [PATHS]";
  workload::too_many_args(argc, 2, usage);
  long allocations = workload::arg(argc, argv, 1, 1000000, usage);
  long paths = workload::arg(argc, argv, 2, 8, usage);
  workload::Rng rng{0x7061746873ull};
  static void* slots[kSlots];
  std::uint64_t sum = 0;
  for (long i = 0; i < allocations; ++i) {
    int depth = 1 + static_cast<int>(rng.below(29));
    std::uint64_t path = rng.below(static_cast<std::uint64_t>(paths)) * 0x9e3779b9u;
    std::size_t size = workload::log_uniform_size(rng, 4, 13);
    std::uint64_t slot = rng.below(kSlots);
    std::free(slots[slot]);
    slots[slot] = descend(depth, path, size);
    sum = sum * 31 + size + static_cast<std::uint64_t>(depth);
  }
  for (void* p : slots) std::free(p);
  workload::report("call_paths", sum);
  return 0;
}
