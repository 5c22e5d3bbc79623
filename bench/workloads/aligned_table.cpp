// aligned_table: posix_memalign with alignments of 16 B..4 KiB and sizes of
// 16 B..8 KiB; each block replaces (and frees) a random slot of a 4096-slot
// live table, so frees come in random order and the live set stays bounded.
//
//   aligned_table ALLOCATIONS
#include <cstdlib>

#include "workload.hpp"

namespace {

constexpr int kSlots = 4096;

__attribute__((noinline)) void* aligned_alloc_site(std::size_t alignment, std::size_t size) {
  void* p = nullptr;
  if (posix_memalign(&p, alignment, size) != 0) std::abort();
  workload::touch(p);
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "aligned_table ALLOCATIONS";
  workload::too_many_args(argc, 1, usage);
  long allocations = workload::arg(argc, argv, 1, 1000000, usage);
  workload::Rng rng{0x616c69676eull};
  static void* slots[kSlots];
  std::uint64_t sum = 0;
  for (long i = 0; i < allocations; ++i) {
    std::size_t alignment = std::size_t{16} << rng.below(9);  // 16 B .. 4 KiB
    std::size_t size = workload::log_uniform_size(rng, 4, 13);
    std::uint64_t slot = rng.below(kSlots);
    std::free(slots[slot]);
    slots[slot] = aligned_alloc_site(alignment, size);
    sum = sum * 31 + alignment + size;
  }
  for (void* p : slots) std::free(p);
  workload::report("aligned_table", sum);
  return 0;
}
