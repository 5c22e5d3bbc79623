// N cached alloc+free pairs of one contender, nothing else: run under
// callgrind twice (N, 2N) by bench_allocator_instructions.sh to count the
// instructions of one pair without the machine's noise.
//   bench_allocator_pairs N SIZE[,SIZE...] malloc|caching|bfc
// With several sizes the pairs cycle through them (64,4096: a 64 B pair,
// then a 4 KiB pair, ...): no pair repeats the one before, so the pools'
// pending undo never applies and every free is done in full.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

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
  std::vector<std::uint64_t> sizes;
  for (const char* s = argv[2]; *s;) {
    char* end = nullptr;
    sizes.push_back(std::strtoull(s, &end, 10));
    if (end == s || sizes.back() == 0 || (*end && *end != ',')) {
      std::fprintf(stderr, "bad size list '%s' (e.g. 64 or 64,4096)\n", argv[2]);
      return 2;
    }
    s = *end ? end + 1 : end;
  }
  const std::size_t k = sizes.size();
  const std::string kind = argv[3];
  SystemHeapResource heap;
  if (kind == "caching") {
    CachingPool pool(heap, CachingConfig{});
    for (std::uint64_t size : sizes) pool.free(pool.malloc(size));  // segments cached from here on
    for (long i = 0; i < n; ++i) {
      void* p = pool.malloc(sizes[i % k]);
      asm volatile("" ::"r"(p) : "memory");
      pool.free(p);
    }
  } else if (kind == "bfc") {
    BfcOptions o;
    o.preallocate = false;
    o.memory_limit = 1ull << 30;
    BfcPool pool(heap, o);
    for (std::uint64_t size : sizes) pool.deallocate_raw(pool.allocate_raw(size));
    for (long i = 0; i < n; ++i) {
      void* p = pool.allocate_raw(sizes[i % k]);
      asm volatile("" ::"r"(p) : "memory");
      pool.deallocate_raw(p);
    }
  } else if (kind == "malloc") {
    for (long i = 0; i < n; ++i) {
      void* p = std::malloc(sizes[i % k]);
      asm volatile("" ::"r"(p) : "memory");
      std::free(p);
    }
  } else {
    std::fprintf(stderr, "unknown contender '%s' (malloc, caching or bfc)\n", kind.c_str());
    return 2;
  }
  return 0;
}
