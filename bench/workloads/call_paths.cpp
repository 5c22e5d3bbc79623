// call_paths: allocations 2..30 frames deep through several paths, by
// recursion. Each allocation picks a depth (1..29 recursive frames over the
// allocation site) and one of 8 entry functions, so the program has
// 8 * 29 distinct stacks, each seen again and again. Blocks of 16 B..8 KiB
// replace (and free) a random slot of a 1024-slot table. heaptrack 1.4's
// interpreter fails on this shape (bad_alloc past 4 GiB by 2*10^5
// allocations): a recursion entered from several callers; from one caller
// (entry<0> only, as gui_churn's recursion) it works.
//
// Built twice (bench/CMakeLists.txt): call_paths with frame pointers and
// call_paths_nofp without, so the unwinder's two paths are both measured.
//
//   call_paths ALLOCATIONS
#include "workload.hpp"

namespace {

constexpr int kSlots = 1024;

__attribute__((noinline)) void* leaf_alloc(std::size_t size) {
  void* p = std::malloc(size);
  workload::touch(p);
  return p;
}

__attribute__((noinline)) void* descend(int depth, std::size_t size) {
  void* p = depth <= 1 ? leaf_alloc(size) : descend(depth - 1, size);
  asm volatile("" ::: "memory");
  return p;
}

// The paths: kPaths entry functions, each its own return address above the
// recursion.
constexpr int kPaths = 8;
template <int K>
__attribute__((noinline)) void* entry(int depth, std::size_t size) {
  void* p = descend(depth, size);
  asm volatile("" ::: "memory");
  return p;
}
using Entry = void* (*)(int, std::size_t);
constexpr Entry kEntries[kPaths] = {&entry<0>, &entry<1>, &entry<2>, &entry<3>,
                                    &entry<4>, &entry<5>, &entry<6>, &entry<7>};

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "call_paths ALLOCATIONS";
  workload::too_many_args(argc, 1, usage);
  long allocations = workload::arg(argc, argv, 1, 1000000, usage);
  workload::Rng rng{0x7061746873ull};
  static void* slots[kSlots];
  std::uint64_t sum = 0;
  for (long i = 0; i < allocations; ++i) {
    int depth = 1 + static_cast<int>(rng.below(29));
    Entry path = kEntries[rng.below(kPaths)];
    std::size_t size = workload::log_uniform_size(rng, 4, 13);
    std::uint64_t slot = rng.below(kSlots);
    std::free(slots[slot]);
    slots[slot] = path(depth, size);
    sum = sum * 31 + size + static_cast<std::uint64_t>(depth);
  }
  for (void* p : slots) std::free(p);
  workload::report("call_paths", sum);
  return 0;
}
