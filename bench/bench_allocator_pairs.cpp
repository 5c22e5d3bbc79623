// N cached alloc+free pairs of one contender, nothing else: run under
// callgrind twice (N, 2N) by bench_allocator_instructions.sh to count the
// instructions of one pair without the machine's noise.
//   bench_allocator_pairs N SIZE malloc|caching|bfc
#include <cstdio>
#include <cstdlib>
#include <string>

#include "memtrail/alloc/bfc_pool.hpp"
#include "memtrail/alloc/caching_pool.hpp"
#include "memtrail/alloc/host_resources.hpp"

using namespace memtrail::alloc;

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s N SIZE malloc|caching|bfc\n", argv[0]);
    return 2;
  }
  const long n = std::atol(argv[1]);
  const std::uint64_t size = std::strtoull(argv[2], nullptr, 10);
  const std::string kind = argv[3];
  SystemHeapResource heap;
  if (kind == "caching") {
    CachingPool pool(heap, CachingConfig{});
    pool.free(pool.malloc(size));  // the segment is cached from here on
    for (long i = 0; i < n; ++i) {
      void* p = pool.malloc(size);
      asm volatile("" ::"r"(p) : "memory");
      pool.free(p);
    }
  } else if (kind == "bfc") {
    BfcOptions o;
    o.preallocate = false;
    o.memory_limit = 1ull << 30;
    BfcPool pool(heap, o);
    pool.deallocate_raw(pool.allocate_raw(size));
    for (long i = 0; i < n; ++i) {
      void* p = pool.allocate_raw(size);
      asm volatile("" ::"r"(p) : "memory");
      pool.deallocate_raw(p);
    }
  } else if (kind == "malloc") {
    for (long i = 0; i < n; ++i) {
      void* p = std::malloc(size);
      asm volatile("" ::"r"(p) : "memory");
      std::free(p);
    }
  } else {
    std::fprintf(stderr, "unknown contender '%s' (malloc, caching or bfc)\n", kind.c_str());
    return 2;
  }
  return 0;
}
