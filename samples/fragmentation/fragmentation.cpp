// Fragmentation demo. A small (1.2 MiB) and a large (18 MiB) tensor are
// allocated in turn, so every 20 MiB segment holds one of each; when the
// large ones are freed, each segment keeps a small live block and nothing
// can be returned, not even by empty_cache(): reserved stays ~17x what is
// used ("Non-releasable memory" in the summary). The same workload then runs
// with expandable_segments:True and with BFC, for comparison. Runs on host memory (mmap, a 2 GiB
// "device"); set MEMTRAIL_OUTPUT=frag.mtr to record it.
//
//   fragmentation [--summary-only]
#include <cstdio>
#include <cstring>
#include <vector>

#include "memtrail/alloc/bfc_pool.hpp"
#include "memtrail/alloc/caching_pool.hpp"
#include "memtrail/alloc/capacity_resource.hpp"
#include "memtrail/alloc/host_resources.hpp"
#include "memtrail/size.hpp"

namespace {

using namespace memtrail::alloc;
constexpr std::uint64_t kMiB = 1ull << 20;

struct Outcome {
  std::uint64_t reserved, used;
};

// The workload, over any allocate/free pair; `release` returns cached
// memory. Returns the blocks still live (the small ones).
template <typename Alloc, typename Free, typename Release>
std::vector<void*> workload(Alloc alloc, Free free, Release release) {
  std::vector<void*> small, large;
  for (int i = 0; i < 32; ++i) {
    small.push_back(alloc(1258291));     // 1.2 MiB, kept
    std::memset(small.back(), 1, 4096);  // it is real memory
    large.push_back(alloc(18 * kMiB));
  }
  for (void* p : large) free(p);
  release();
  return small;
}

Outcome run_caching(const char* conf, bool print_summary) {
  MmapResource host;
  CapacityLimitedResource device(host, 2048 * kMiB, "2 GiB device", memtrail::MemorySpace::host);
  CachingPool pool(device, CachingConfig::parse(conf), "caching pool");
  std::vector<void*> live = workload([&](std::uint64_t n) { return pool.malloc(n); },
                                     [&](void* p) { pool.free(p); }, [&] { pool.empty_cache(); });
  auto stats = pool.memory_stats();
  if (print_summary) std::fputs(pool.memory_summary().c_str(), stdout);
  for (void* p : live) pool.free(p);
  return {static_cast<std::uint64_t>(stats["reserved_bytes.all.current"]),
          static_cast<std::uint64_t>(stats["allocated_bytes.all.current"])};
}

Outcome run_bfc() {
  MmapResource host;
  CapacityLimitedResource device(host, 2048 * kMiB, "2 GiB device", memtrail::MemorySpace::host);
  BfcOptions options;
  options.preallocate = false;  // grow on demand, so "reserved" means something
  BfcPool pool(device, options, "bfc pool");
  std::vector<void*> live =
      workload([&](std::uint64_t n) { return pool.allocate_raw(n); },
               [&](void* p) { pool.deallocate_raw(p); }, [] {});  // BFC has no empty_cache
  BfcStats s = pool.stats();
  for (void* p : live) pool.deallocate_raw(p);
  return {static_cast<std::uint64_t>(s.pool_bytes), static_cast<std::uint64_t>(s.bytes_in_use)};
}

void line(const char* name, Outcome o) {
  std::printf("%-34s reserved %10s  used %10s  fragmentation %10s (%.0f%%)\n", name,
              memtrail::format_size(o.reserved).c_str(), memtrail::format_size(o.used).c_str(),
              memtrail::format_size(o.reserved - o.used).c_str(),
              100.0 * static_cast<double>(o.reserved - o.used) / static_cast<double>(o.reserved));
}

}  // namespace

int main(int argc, char** argv) {
  const bool summary_only = argc > 1 && std::strcmp(argv[1], "--summary-only") == 0;
  try {
    Outcome caching = run_caching("", true);
    if (summary_only) return 0;
    std::printf("\n");
    line("caching pool (defaults)", caching);
    line("caching pool, expandable_segments", run_caching("expandable_segments:True", false));
    line("bfc arena (allow_growth)", run_bfc());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fragmentation: %s\n", e.what());
    return 1;
  }
  return 0;
}
