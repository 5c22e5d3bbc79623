// Differential check between two implementations of the pools: the same
// seeded random operations (all sizes, three streams, record_stream and
// synchronize, empty_cache, stat resets, a capacity-limited upstream with
// OOM and retries, memory fraction + garbage collection, max_split_size,
// expandable segments, roundup divisions; BFC growth, preallocation, GC)
// with every returned pointer, a hash of all memory_stats() keys after each
// operation, and snapshots / memory_summary() every 500. Two builds must
// print the same bytes. Built and compared by compare_with_revision.sh.
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>
#include "memtrail/alloc/bfc_pool.hpp"
#include "memtrail/alloc/caching_pool.hpp"
#include "memtrail/alloc/errors.hpp"
#include "memtrail/alloc/virtual_resource.hpp"
using namespace memtrail::alloc;

static void dump_stats(const std::map<std::string, std::int64_t>& m) {
  unsigned long long h = 1469598103934665603ull;
  for (auto& [k, v] : m) {
    for (char c : k) h = (h ^ (unsigned char)c) * 1099511628211ull;
    h = (h ^ (unsigned long long)v) * 1099511628211ull;
  }
  std::printf(" stats=%llx\n", h);
}

static void caching(const char* conf, double fraction, std::uint64_t seed) {
  VirtualResource dev(512ull << 20);
  CachingPool pool(dev, CachingConfig::parse(conf));
  if (fraction > 0) pool.set_memory_fraction(fraction);
  std::mt19937_64 rng(seed);
  std::vector<std::pair<void*, int>> live;
  std::printf("== caching '%s' %.2f %llu\n", conf, fraction, (unsigned long long)seed);
  for (int i = 0; i < 6000; ++i) {
    const unsigned r = rng() % 100;
    if (r < 50 || live.empty()) {
      std::uint64_t size;
      switch (rng() % 4) {
        case 0:
          size = 1 + rng() % 4096;
          break;
        case 1:
          size = 1 + rng() % (1 << 20);
          break;
        case 2:
          size = (1 << 20) + rng() % (12 << 20);
          break;
        default:
          size = (1 << 20) + rng() % (60 << 20);
          break;
      }
      const int stream = static_cast<int>(rng() % 3);
      try {
        void* p = pool.malloc(size, stream);
        live.push_back({p, stream});
        std::printf("%d malloc %llu s%d -> %p", i, (unsigned long long)size, stream, p);
      } catch (const OutOfMemoryError&) {
        std::printf("%d malloc %llu s%d -> OOM", i, (unsigned long long)size, stream);
      }
    } else if (r < 85) {
      const std::size_t k = rng() % live.size();
      pool.free(live[k].first);
      std::printf("%d free %p", i, live[k].first);
      live[k] = live.back();
      live.pop_back();
    } else if (r < 93) {
      const std::size_t k = rng() % live.size();
      const int s = static_cast<int>(rng() % 3);
      pool.record_stream(live[k].first, s);
      std::printf("%d record %p s%d", i, live[k].first, s);
    } else if (r < 98) {
      const int s = static_cast<int>(rng() % 3);
      pool.synchronize_stream(s);
      std::printf("%d sync s%d", i, s);
    } else if (r < 99) {
      pool.empty_cache();
      std::printf("%d empty_cache", i);
    } else {
      if (rng() % 2)
        pool.reset_peak_memory_stats();
      else
        pool.reset_accumulated_memory_stats();
      std::printf("%d reset", i);
    }
    dump_stats(pool.memory_stats());
    if (i % 500 == 0) {
      auto snap = pool.snapshot();
      std::printf("snapshot %zu segments:", snap.segments.size());
      for (auto& s : snap.segments) {
        std::printf(" [%llx %llu:", (unsigned long long)s.address,
                    (unsigned long long)s.total_size);
        for (auto& b : s.blocks) std::printf(" %llu/%d", (unsigned long long)b.size, (int)b.state);
        std::printf("]");
      }
      std::printf("\n%s\n", pool.memory_summary().c_str());
    }
  }
}

static void bfc(const char* conf, std::uint64_t seed) {
  VirtualResource dev(512ull << 20);
  BfcPool pool(dev, BfcOptions::parse(conf));
  std::mt19937_64 rng(seed);
  std::vector<void*> live;
  std::printf("== bfc '%s' %llu\n", conf, (unsigned long long)seed);
  for (int i = 0; i < 6000; ++i) {
    if (rng() % 100 < 52 || live.empty()) {
      std::uint64_t size = rng() % 3 ? 1 + rng() % 8192 : 1 + rng() % (24 << 20);
      try {
        void* p = pool.allocate_raw(size);
        live.push_back(p);
        std::printf("%d alloc %llu -> %p", i, (unsigned long long)size, p);
      } catch (const std::exception&) {
        std::printf("%d alloc %llu -> OOM", i, (unsigned long long)size);
      }
    } else {
      const std::size_t k = rng() % live.size();
      pool.deallocate_raw(live[k]);
      std::printf("%d free %p", i, live[k]);
      live[k] = live.back();
      live.pop_back();
    }
    dump_stats(pool.stats().to_map());
    if (i % 500 == 0) {
      auto snap = pool.snapshot();
      for (auto& s : snap.segments) {
        std::printf(" [%llx %llu:", (unsigned long long)s.address,
                    (unsigned long long)s.total_size);
        for (auto& b : s.blocks) std::printf(" %llu/%d", (unsigned long long)b.size, (int)b.state);
        std::printf("]");
      }
      std::printf("\n");
    }
  }
}

int main() {
  for (std::uint64_t seed : {1, 2, 3}) {
    caching("", 0, seed);
    caching("max_split_size_mb:20", 0, seed);
    caching("max_split_size_mb:64,garbage_collection_threshold:0.6", 0.7, seed);
    caching("garbage_collection_threshold:0.5", 0.9, seed);
    caching("expandable_segments:True", 0, seed);
    caching("expandable_segments:True,max_split_size_mb:30", 0, seed);
    caching("roundup_power2_divisions:4", 0, seed);
    bfc("preallocate:False,memory_limit:300MiB", seed);
    bfc("preallocate:True,memory_limit:200MiB", seed);
    bfc("preallocate:False,memory_limit:100MiB,fragmentation_fraction:0.01", seed);
  }
}
