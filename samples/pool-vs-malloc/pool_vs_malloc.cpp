// Pool vs malloc: a training-loop-like workload (a live set of tensors of
// mixed sizes, freed and re-allocated each step) through CachingPool and
// BfcPool on the host heap and through glibc malloc. Prints time per
// allocation and what each one holds at the end: the pools' own stats, and
// glibc's mallinfo2 arena figures.
//
//   pool-vs-malloc [STEPS]    (default 2000)
#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "memtrail/alloc/bfc_pool.hpp"
#include "memtrail/alloc/caching_pool.hpp"
#include "memtrail/alloc/host_resources.hpp"
#include "memtrail/size.hpp"

namespace {

using namespace memtrail::alloc;
using Clock = std::chrono::steady_clock;

// Sizes from 256 B to 4 MiB, log-uniform, fixed seed: the same sequence for
// every contender.
std::vector<std::uint64_t> make_sizes(std::size_t n) {
  std::mt19937_64 rng(42);
  std::vector<std::uint64_t> sizes(n);
  for (auto& s : sizes) s = 256ull << (rng() % 15) | (rng() % 256);
  return sizes;
}

template <typename Alloc, typename Free>
double run(const std::vector<std::uint64_t>& sizes, int steps, Alloc alloc, Free free) {
  std::vector<void*> live(256, nullptr);
  std::size_t next = 0;
  auto start = Clock::now();
  std::uint64_t ops = 0;
  for (int step = 0; step < steps; ++step) {
    for (std::size_t slot = step % 4; slot < live.size(); slot += 4) {  // a quarter turns over
      if (live[slot]) free(live[slot]);
      live[slot] = alloc(sizes[next++ % sizes.size()]);
      static_cast<char*>(live[slot])[0] = 1;
      ++ops;
    }
  }
  double ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
  for (void* p : live)
    if (p) free(p);
  return ns / static_cast<double>(ops);
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 2000;
  if (steps <= 0) {
    std::fprintf(stderr, "pool-vs-malloc: STEPS must be a positive number\n");
    return 2;
  }
  const auto sizes = make_sizes(1 << 16);

  double malloc_ns = run(
      sizes, steps, [](std::uint64_t n) { return std::malloc(n); }, std::free);
  struct mallinfo2 mi = mallinfo2();

  SystemHeapResource heap("system heap");
  CachingPool caching(heap, CachingConfig{}, "caching pool");
  double caching_ns = run(
      sizes, steps, [&](std::uint64_t n) { return caching.malloc(n); },
      [&](void* p) { caching.free(p); });
  auto cs = caching.memory_stats();

  SystemHeapResource heap2("system heap");
  BfcOptions bo;
  bo.preallocate = false;
  bo.memory_limit = 8ull << 30;
  BfcPool bfc(heap2, bo, "bfc pool");
  double bfc_ns = run(
      sizes, steps, [&](std::uint64_t n) { return bfc.allocate_raw(n); },
      [&](void* p) { bfc.deallocate_raw(p); });
  BfcStats bs = bfc.stats();

  using memtrail::format_size;
  std::printf("%-14s %12s %16s %16s\n", "allocator", "ns/alloc", "peak reserved", "peak in use");
  std::printf("%-14s %12.1f %16s %16s   (mallinfo2 arena %s + mmap %s after the run)\n",
              "glibc malloc", malloc_ns, "-", "-", format_size(mi.arena).c_str(),
              format_size(mi.hblkhd).c_str());
  std::printf("%-14s %12.1f %16s %16s\n", "CachingPool", caching_ns,
              format_size(static_cast<std::uint64_t>(cs["reserved_bytes.all.peak"])).c_str(),
              format_size(static_cast<std::uint64_t>(cs["allocated_bytes.all.peak"])).c_str());
  std::printf("%-14s %12.1f %16s %16s\n", "BfcPool", bfc_ns,
              format_size(static_cast<std::uint64_t>(bs.peak_pool_bytes)).c_str(),
              format_size(static_cast<std::uint64_t>(bs.peak_bytes_in_use)).c_str());
  std::printf("\nCachingPool hits: %lld of %lld allocations came from its cache\n",
              static_cast<long long>(cs["allocation.all.allocated"] - cs["num_device_alloc"]),
              static_cast<long long>(cs["allocation.all.allocated"]));
  return 0;
}
