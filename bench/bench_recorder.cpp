// Recorder cost per event, on the recording thread: tracing off, tracing on
// without stacks and with 10-frame stacks, against a plain malloc/free pair
// as the reference line. The writer thread drains concurrently, as in a real
// run; the figures include its interference on this 2-core machine.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "memtrail/recorder.hpp"
#include "traced_session.hpp"

namespace {

void BM_MallocFreePair(benchmark::State& state) {
  for (auto _ : state) {
    void* p = std::malloc(64);
    benchmark::DoNotOptimize(p);
    std::free(p);
  }
}
BENCHMARK(BM_MallocFreePair);

void BM_RecordTracingOff(benchmark::State& state) {
  std::uintptr_t a = 0x1000;
  for (auto _ : state) {
    memtrail::record_alloc(1, reinterpret_cast<void*>(a), 64, 64);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RecordTracingOff);

void BM_RecordNoStacks(benchmark::State& state) {
  memtrail::bench::TracedSession session("recorder", false, 10, true);
  std::uint32_t pool = memtrail::register_pool(
      {0, 0, "bench", memtrail::PoolKind::other, memtrail::MemorySpace::host, -1});
  std::uintptr_t a = 0x1000;
  for (auto _ : state) {
    memtrail::record_alloc(pool, reinterpret_cast<void*>(a), 64, 64);
    a += 64;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RecordNoStacks);

// Recurses so the recording site is at least `depth` frames deep.
__attribute__((noinline)) void record_at_depth(int depth, std::uint32_t pool, std::uintptr_t a) {
  if (depth > 0) {
    record_at_depth(depth - 1, pool, a);
  } else {
    memtrail::record_alloc(pool, reinterpret_cast<void*>(a), 64, 64);
  }
  asm volatile("" ::: "memory");
}

void BM_RecordStacks10(benchmark::State& state) {
  memtrail::bench::TracedSession session("recorder", true, 10, true);
  std::uint32_t pool = memtrail::register_pool(
      {0, 0, "bench", memtrail::PoolKind::other, memtrail::MemorySpace::host, -1});
  std::uintptr_t a = 0x1000;
  for (auto _ : state) {
    record_at_depth(12, pool, a);
    a += 64;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RecordStacks10);

// Reference for the line above: the same recursion with tracing off.
void BM_RecursionOnlyTracingOff(benchmark::State& state) {
  std::uintptr_t a = 0x1000;
  for (auto _ : state) {
    record_at_depth(12, 1, a);
    a += 64;
  }
}
BENCHMARK(BM_RecursionOnlyTracingOff);

}  // namespace

BENCHMARK_MAIN();
