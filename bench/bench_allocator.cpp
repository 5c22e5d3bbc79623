// Allocator pools against glibc, side by side in one run:
//  - a cached alloc+free pair of CachingPool and BfcPool on the host heap
//    upstream vs malloc/free, at 64 B, 4 KiB, 1 MiB and 64 MiB;
//  - the same pool pairs with tracing on (no stacks / 10-frame stacks);
//  - replay throughput: parsing and running a generated 1M-operation script;
//  - last, the cached pairs again once the process has had a second thread
//    (malloc and the pools then take their locks with atomic instructions;
//    while single-threaded both skip them).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include "memtrail/alloc/bfc_pool.hpp"
#include "memtrail/alloc/caching_pool.hpp"
#include "memtrail/alloc/host_resources.hpp"
#include "memtrail/alloc/replay.hpp"
#include "memtrail/recorder.hpp"
#include "traced_session.hpp"

namespace {

using namespace memtrail::alloc;

void sizes(benchmark::internal::Benchmark* b) {
  for (std::int64_t s : {64ll, 4096ll, 1ll << 20, 64ll << 20}) b->Arg(s);
}

void BM_Malloc(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    void* p = std::malloc(n);
    benchmark::DoNotOptimize(p);
    std::free(p);
  }
}
BENCHMARK(BM_Malloc)->Apply(sizes);

void BM_CachingPool(benchmark::State& state) {
  SystemHeapResource heap;
  CachingPool pool(heap, CachingConfig{});
  const auto n = static_cast<std::uint64_t>(state.range(0));
  pool.free(pool.malloc(n));  // the segment is cached from here on
  for (auto _ : state) {
    void* p = pool.malloc(n);
    benchmark::DoNotOptimize(p);
    pool.free(p);
  }
}
BENCHMARK(BM_CachingPool)->Apply(sizes);

void BM_BfcPool(benchmark::State& state) {
  SystemHeapResource heap;
  BfcOptions o;
  o.preallocate = false;
  o.memory_limit = 1ull << 30;
  BfcPool pool(heap, o);
  const auto n = static_cast<std::uint64_t>(state.range(0));
  pool.deallocate_raw(pool.allocate_raw(n));
  for (auto _ : state) {
    void* p = pool.allocate_raw(n);
    benchmark::DoNotOptimize(p);
    pool.deallocate_raw(p);
  }
}
BENCHMARK(BM_BfcPool)->Apply(sizes);

// A 64 B pair then a 4 KiB pair per iteration: no pair repeats the one
// before, so the pools' pending undo never applies (each free is done in
// full, by the next malloc). Time per iteration = two pairs.
void BM_MallocAlternating(benchmark::State& state) {
  for (auto _ : state) {
    void* p = std::malloc(64);
    benchmark::DoNotOptimize(p);
    std::free(p);
    void* q = std::malloc(4096);
    benchmark::DoNotOptimize(q);
    std::free(q);
  }
}
BENCHMARK(BM_MallocAlternating);

void BM_CachingPoolAlternating(benchmark::State& state) {
  SystemHeapResource heap;
  CachingPool pool(heap, CachingConfig{});
  pool.free(pool.malloc(64));
  for (auto _ : state) {
    void* p = pool.malloc(64);
    benchmark::DoNotOptimize(p);
    pool.free(p);
    void* q = pool.malloc(4096);
    benchmark::DoNotOptimize(q);
    pool.free(q);
  }
}
BENCHMARK(BM_CachingPoolAlternating);

void BM_BfcPoolAlternating(benchmark::State& state) {
  SystemHeapResource heap;
  BfcOptions o;
  o.preallocate = false;
  o.memory_limit = 1ull << 30;
  BfcPool pool(heap, o);
  pool.deallocate_raw(pool.allocate_raw(64));
  for (auto _ : state) {
    void* p = pool.allocate_raw(64);
    benchmark::DoNotOptimize(p);
    pool.deallocate_raw(p);
    void* q = pool.allocate_raw(4096);
    benchmark::DoNotOptimize(q);
    pool.deallocate_raw(q);
  }
}
BENCHMARK(BM_BfcPoolAlternating);

// Tracing on: each pair records two events (reuse + free).
void BM_CachingPoolTraced(benchmark::State& state) {
  SystemHeapResource heap;
  CachingPool pool(heap, CachingConfig{});
  pool.free(pool.malloc(4096));
  memtrail::bench::TracedSession session("allocator", state.range(0) != 0);
  for (auto _ : state) {
    void* p = pool.malloc(4096);
    benchmark::DoNotOptimize(p);
    pool.free(p);
  }
  state.SetItemsProcessed(2 * state.iterations());
  state.SetLabel(state.range(0) ? "stacks (10 frames)" : "no stacks");
}
BENCHMARK(BM_CachingPoolTraced)->Arg(0)->Arg(1);

void BM_BfcPoolTraced(benchmark::State& state) {
  SystemHeapResource heap;
  BfcOptions o;
  o.preallocate = false;
  o.memory_limit = 1ull << 30;
  BfcPool pool(heap, o);
  pool.deallocate_raw(pool.allocate_raw(4096));
  memtrail::bench::TracedSession session("allocator", state.range(0) != 0);
  for (auto _ : state) {
    void* p = pool.allocate_raw(4096);
    benchmark::DoNotOptimize(p);
    pool.deallocate_raw(p);
  }
  state.SetItemsProcessed(2 * state.iterations());
  state.SetLabel(state.range(0) ? "stacks (10 frames)" : "no stacks");
}
BENCHMARK(BM_BfcPoolTraced)->Arg(0)->Arg(1);

// A 1M-operation script: a live set of up to 2000 blocks, sizes from 256 B
// to 64 MiB, one empty_cache per 10000 operations.
const std::string& replay_text() {
  static const std::string text = [] {
    std::mt19937_64 rng(7);
    std::ostringstream s;
    std::vector<int> live;
    int next = 0;
    for (int i = 0; i < 1000000; ++i) {
      if (i % 10000 == 9999) {
        s << "empty_cache\n";
      } else if (live.empty() || (rng() % 100 < 52 && live.size() < 2000)) {
        s << "b" << next << " = malloc " << ((256ull << (rng() % 19)) + rng() % 4096) << "\n";
        live.push_back(next++);
      } else {
        std::size_t k = rng() % live.size();
        s << "free b" << live[k] << "\n";
        live[k] = live.back();
        live.pop_back();
      }
    }
    return s.str();
  }();
  return text;
}

void BM_ReplayParse(benchmark::State& state) {
  for (auto _ : state) {
    std::istringstream in(replay_text());
    auto script = ReplayScript::parse(in, "bench");
    benchmark::DoNotOptimize(script.ops.data());
  }
  state.SetItemsProcessed(state.iterations() * 1000000);
}
BENCHMARK(BM_ReplayParse)->Unit(benchmark::kMillisecond);

void BM_ReplayRun(benchmark::State& state) {
  std::istringstream in(replay_text());
  const auto script = ReplayScript::parse(in, "bench");
  ReplayOptions options;
  options.allocator = static_cast<ReplayAllocator>(state.range(0));
  for (auto _ : state) {
    auto r = run_replay(script, options);
    benchmark::DoNotOptimize(r.peak_reserved);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(script.ops.size()));
  static const char* kNames[] = {"caching", "bfc", "malloc"};
  state.SetLabel(kNames[state.range(0)]);
}
BENCHMARK(BM_ReplayRun)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

// Registered last: once a second thread has existed, glibc's malloc and the
// pools' locks use atomic instructions for the rest of the process.
void make_multithreaded() {
  static const bool done = [] {
    std::thread([] {}).join();
    return true;
  }();
  (void)done;
}

void BM_MallocMT(benchmark::State& state) {
  make_multithreaded();
  BM_Malloc(state);
}
BENCHMARK(BM_MallocMT)->Apply(sizes);

void BM_CachingPoolMT(benchmark::State& state) {
  make_multithreaded();
  BM_CachingPool(state);
}
BENCHMARK(BM_CachingPoolMT)->Apply(sizes);

void BM_BfcPoolMT(benchmark::State& state) {
  make_multithreaded();
  BM_BfcPool(state);
}
BENCHMARK(BM_BfcPoolMT)->Apply(sizes);

}  // namespace

BENCHMARK_MAIN();
