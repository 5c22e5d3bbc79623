// mmap_regions: anonymous mappings made and dropped by the program itself
// (arenas, buffers, JIT pages): REGIONS mmap calls of 4 KiB..1 MiB, one page
// of each touched, kept in a FIFO of 64 live regions and munmap'd oldest
// first. heaptrack does not see mmap; memtrail records it as a segment.
//
//   mmap_regions REGIONS
#include <sys/mman.h>

#include "workload.hpp"

namespace {

constexpr int kLive = 64;

struct Region {
  void* at = nullptr;
  std::size_t size = 0;
};

__attribute__((noinline)) Region map_region(std::size_t size) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) std::abort();
  workload::touch(p);
  return {p, size};
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "mmap_regions REGIONS";
  workload::too_many_args(argc, 1, usage);
  long regions = workload::arg(argc, argv, 1, 200000, usage);
  workload::Rng rng{0x6d6d6170ull};
  Region live[kLive];
  std::uint64_t sum = 0;
  for (long i = 0; i < regions; ++i) {
    Region& oldest = live[i % kLive];
    if (oldest.at != nullptr) munmap(oldest.at, oldest.size);
    std::size_t pages = workload::log_uniform_size(rng, 0, 8);  // 1 .. 256 pages
    oldest = map_region(pages * 4096);
    sum = sum * 31 + pages;
  }
  for (Region& r : live)
    if (r.at != nullptr) munmap(r.at, r.size);
  workload::report("mmap_regions", sum);
  return 0;
}
