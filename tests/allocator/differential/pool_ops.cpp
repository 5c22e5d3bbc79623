// Differential check between two implementations of the pools: the same
// seeded random operations (all sizes, three streams, record_stream and
// synchronize, empty_cache, stat resets, a capacity-limited upstream with
// OOM and retries, memory fraction + garbage collection, max_split_size,
// expandable segments, roundup divisions; BFC growth, preallocation, GC)
// with every returned pointer, a hash of all memory_stats() keys after each
// operation, and snapshots / memory_summary() every 500. Two builds must
// print the same bytes. Built and compared by compare_with_revision.sh.
//
// A second mode (`repeat`) makes the pattern the pools' pending undo
// defers (free the block just handed out, then ask for the same rounded
// size again) happen most of the time, broken now and then by everything
// that must end it: another size, another stream, a free of another block,
// record_stream, synchronize, empty_cache, resets, stats, snapshots and
// summaries read in between (stats are hashed only every few operations
// here, since each read ends a pending undo), optionally with a second
// thread alive so that the pools take their locked paths.
#include <cstdio>
#include <cstdlib>
#include <future>
#include <map>
#include <random>
#include <string>
#include <thread>
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

static void dump_snapshot(const PoolSnapshot& snap) {
  std::printf("snapshot %zu segments:", snap.segments.size());
  for (auto& s : snap.segments) {
    std::printf(" [%llx %llu:", (unsigned long long)s.address, (unsigned long long)s.total_size);
    for (auto& b : s.blocks)
      std::printf(" %llu/%d/%llu", (unsigned long long)b.size, (int)b.state,
                  (unsigned long long)b.requested_size);
    std::printf("]");
  }
  std::printf("\n");
}

// A request near `size` that rounds (512 B, or 256 B for BFC) to the same size.
static std::uint64_t same_rounding(std::mt19937_64& rng, std::uint64_t size,
                                   std::uint64_t granule) {
  const std::uint64_t top = (size + granule - 1) / granule * granule;
  const std::uint64_t low = top > granule ? top - granule + 1 : 1;
  return low + rng() % (top - low + 1);
}

static std::uint64_t repeat_size(std::mt19937_64& rng) {
  switch (rng() % 8) {
    case 0:
      return 1 + rng() % 64;
    case 1:
    case 2:
      return 1 + rng() % 8192;
    case 3:
      return 1 + rng() % (1 << 20);
    case 4:
      return (1 << 20) + rng() % (12 << 20);
    case 5:
      return (20 << 20) - rng() % 4096;
    default:
      return 1 + rng() % 1024;
  }
}

static void caching_repeat(const char* conf, double fraction, std::uint64_t seed) {
  VirtualResource dev(512ull << 20);
  CachingPool pool(dev, CachingConfig::parse(conf));
  if (fraction > 0) pool.set_memory_fraction(fraction);
  std::mt19937_64 rng(seed);
  struct Live {
    void* p;
    int stream;
    std::uint64_t size;
  };
  std::vector<Live> live;
  Live last{nullptr, 0, 64};  // the last block handed out (p) or freed
  bool last_alloc = false, last_free = false;
  std::printf("== caching repeat '%s' %.2f %llu\n", conf, fraction, (unsigned long long)seed);
  auto do_malloc = [&](int i, std::uint64_t size, int stream) {
    try {
      void* p = pool.malloc(size, stream);
      live.push_back({p, stream, size});
      last = live.back();
      last_alloc = true;
      std::printf("%d malloc %llu s%d -> %p\n", i, (unsigned long long)size, stream, p);
    } catch (const OutOfMemoryError&) {
      std::printf("%d malloc %llu s%d -> OOM\n", i, (unsigned long long)size, stream);
    }
  };
  auto do_free = [&](int i, std::size_t k) {
    pool.free(live[k].p);
    std::printf("%d free %p\n", i, live[k].p);
    last = live[k];
    last_free = true;
    live[k] = live.back();
    live.pop_back();
  };
  for (int i = 0; i < 6000; ++i) {
    const bool was_alloc = last_alloc, was_free = last_free;
    last_alloc = last_free = false;
    const unsigned r = rng() % 100;
    if (was_alloc && r < 70) {
      do_free(i, live.size() - 1);  // the block just handed out
    } else if (was_free && r < 70) {
      const unsigned v = rng() % 10;
      if (v < 5)
        do_malloc(i, last.size, last.stream);
      else if (v < 7)
        do_malloc(i, same_rounding(rng, last.size, 512), last.stream);
      else if (v < 8)
        do_malloc(i, last.size, static_cast<int>((last.stream + 1 + rng() % 2) % 3));
      else
        do_malloc(i, last.size + 1 + rng() % 2048, last.stream);
    } else if (r < 80 || live.empty()) {
      do_malloc(i, repeat_size(rng), static_cast<int>(rng() % 8 == 0 ? 1 + rng() % 2 : 0));
    } else if (r < 88) {
      do_free(i, rng() % live.size());
    } else if (r < 90 && i >= 4500) {
      // A free deferred by a stream ends CachingPool's plain path (and its
      // undo) for good: only in the last quarter.
      const std::size_t k = rng() % live.size();
      const int s = static_cast<int>(rng() % 3);
      pool.record_stream(live[k].p, s);
      std::printf("%d record %p s%d\n", i, live[k].p, s);
    } else if (r < 92) {
      const int s = static_cast<int>(rng() % 3);
      if (rng() % 4)
        pool.synchronize_stream(s);
      else
        pool.synchronize();
      std::printf("%d sync s%d\n", i, s);
    } else if (r < 93) {
      pool.empty_cache();
      std::printf("%d empty_cache\n", i);
    } else if (r < 94) {
      if (rng() % 2)
        pool.reset_peak_memory_stats();
      else
        pool.reset_accumulated_memory_stats();
      std::printf("%d reset\n", i);
    } else if (r < 97) {
      std::printf("%d allocated %llu reserved %llu\n", i,
                  (unsigned long long)pool.allocated_bytes(),
                  (unsigned long long)pool.reserved_bytes());
    } else if (r < 98) {
      std::printf("%d", i);
      dump_snapshot(pool.snapshot());
    } else if (r < 99) {
      std::printf("%d summary\n%s\n", i, pool.memory_summary().c_str());
    } else {
      std::printf("%d", i);
      dump_stats(pool.memory_stats());
    }
  }
  dump_stats(pool.memory_stats());
  dump_snapshot(pool.snapshot());
  std::printf("%s\n", pool.memory_summary().c_str());
}

static void bfc_repeat(const char* conf, std::uint64_t seed) {
  VirtualResource dev(512ull << 20);
  BfcPool pool(dev, BfcOptions::parse(conf));
  std::mt19937_64 rng(seed);
  std::vector<std::pair<void*, std::uint64_t>> live;
  std::pair<void*, std::uint64_t> last{nullptr, 64};
  bool last_alloc = false, last_free = false;
  std::printf("== bfc repeat '%s' %llu\n", conf, (unsigned long long)seed);
  auto do_alloc = [&](int i, std::uint64_t size) {
    try {
      void* p = pool.allocate_raw(size);
      live.push_back({p, size});
      last = live.back();
      last_alloc = true;
      std::printf("%d alloc %llu -> %p\n", i, (unsigned long long)size, p);
    } catch (const std::exception&) {
      std::printf("%d alloc %llu -> OOM\n", i, (unsigned long long)size);
    }
  };
  auto do_free = [&](int i, std::size_t k) {
    pool.deallocate_raw(live[k].first);
    std::printf("%d free %p\n", i, live[k].first);
    last = live[k];
    last_free = true;
    live[k] = live.back();
    live.pop_back();
  };
  for (int i = 0; i < 6000; ++i) {
    const bool was_alloc = last_alloc, was_free = last_free;
    last_alloc = last_free = false;
    const unsigned r = rng() % 100;
    if (was_alloc && r < 70) {
      do_free(i, live.size() - 1);
    } else if (was_free && r < 70) {
      const unsigned v = rng() % 10;
      if (v < 5)
        do_alloc(i, last.second);
      else if (v < 8)
        do_alloc(i, same_rounding(rng, last.second, 256));
      else
        do_alloc(i, last.second + 1 + rng() % 2048);
    } else if (r < 85 || live.empty()) {
      do_alloc(i, repeat_size(rng));
    } else if (r < 93) {
      do_free(i, rng() % live.size());
    } else if (r < 94) {
      pool.reset_peak_stats();
      std::printf("%d reset\n", i);
    } else if (r < 96) {
      std::printf("%d regions %zu\n", i, pool.region_count());
    } else if (r < 98) {
      std::printf("%d", i);
      dump_snapshot(pool.snapshot());
    } else {
      std::printf("%d", i);
      dump_stats(pool.stats().to_map());
    }
  }
  dump_stats(pool.stats().to_map());
  dump_snapshot(pool.snapshot());
}

static void repeat_mode(std::uint64_t first_seed, int seeds) {
  for (std::uint64_t seed = first_seed; seed < first_seed + seeds; ++seed) {
    caching_repeat("", 0, seed);
    caching_repeat("max_split_size_mb:20", 0, seed);
    caching_repeat("garbage_collection_threshold:0.5", 0.9, seed);
    caching_repeat("expandable_segments:True", 0, seed);
    caching_repeat("roundup_power2_divisions:4", 0, seed);
    caching_repeat("", 0.3, seed);  // a fraction without GC: OOM and retries on the plain path
    bfc_repeat("preallocate:False,memory_limit:300MiB", seed);
    bfc_repeat("preallocate:True,memory_limit:64MiB", seed);
    bfc_repeat("preallocate:False,memory_limit:100MiB,fragmentation_fraction:0.01", seed);
  }
}

// pool_ops                      the original mix, seeds 1-3
// pool_ops repeat FIRST COUNT   the repeat mode, seeds FIRST..FIRST+COUNT-1
// pool_ops repeat-mt FIRST COUNT  the same with a second thread alive
int main(int argc, char** argv) {
  if (argc == 4) {
    const std::string mode = argv[1];
    const std::uint64_t first = std::strtoull(argv[2], nullptr, 10);
    const int count = std::atoi(argv[3]);
    if (mode == "repeat") {
      repeat_mode(first, count);
      return 0;
    }
    if (mode == "repeat-mt") {
      std::promise<void> done;
      std::thread other([f = done.get_future()] { f.wait(); });  // alive, idle
      repeat_mode(first, count);
      done.set_value();
      other.join();
      return 0;
    }
    std::fprintf(stderr, "usage: %s [repeat|repeat-mt FIRST COUNT]\n", argv[0]);
    return 2;
  }
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
