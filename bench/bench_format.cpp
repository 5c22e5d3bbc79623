// Trace size and codec speed on the allocation-churn workload: 2M
// malloc/free pairs, sizes 8 B..64 KiB (log-uniform, as samples/churn),
// even-numbered blocks freed at once, odd ones through a 256-slot ring,
// from 4 call sites; every event carries its ns timestamp and a stack.
//
//   bench_format                       Google Benchmark: bytes/event, codec speed
//   bench_format --churn PAIRS [FILE]  run the workload once, recording to FILE
//                                      (no FILE: untraced, e.g. under heaptrack)
#include <benchmark/benchmark.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "memtrail/recorder.hpp"
#include "memtrail/trace_file.hpp"
#include "workloads/workload.hpp"

namespace {

constexpr int kRingSlots = 256;

using workload::Rng;  // splitmix64, fixed seed: every run allocates the same

std::size_t pick_size(Rng& rng) {
  std::uint64_t r = rng.next();
  std::size_t size = std::size_t{1} << (3 + r % 14);  // 2^3 .. 2^16
  return size - ((r >> 8) % (size / 2 + 1));
}

// Four allocation sites; each records through the recorder API when tracing.
template <int Site>
__attribute__((noinline)) void* site_alloc(std::uint32_t pool, std::size_t size) {
  void* p = std::malloc(size);
  memtrail::record_alloc(pool, p, size, size, memtrail::AllocFn::malloc);
  asm volatile("" ::: "memory");
  return p;
}
__attribute__((noinline)) void traced_free(std::uint32_t pool, void* p) {
  memtrail::record_free(pool, p, 0, memtrail::AllocFn::free);
  std::free(p);
  asm volatile("" ::: "memory");
}

void churn(long pairs, std::uint32_t pool) {
  Rng rng{42};
  void* ring[kRingSlots] = {};
  for (long i = 0; i < pairs; ++i) {
    std::size_t size = pick_size(rng);
    void* p;
    switch (rng.next() % 4) {
      case 0:
        p = site_alloc<0>(pool, size);
        break;
      case 1:
        p = site_alloc<1>(pool, size);
        break;
      case 2:
        p = site_alloc<2>(pool, size);
        break;
      default:
        p = site_alloc<3>(pool, size);
        break;
    }
    if (i % 2 == 0) {
      traced_free(pool, p);
    } else {
      void*& slot = ring[(i / 2) % kRingSlots];
      if (slot) traced_free(pool, slot);
      slot = p;
    }
  }
  for (void*& p : ring)
    if (p) traced_free(pool, p);
}

std::uint64_t file_size(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

struct Count : memtrail::TraceVisitor {
  std::uint64_t events = 0;
  void on_event(const memtrail::Event&) override { ++events; }
};

// Records the churn through the recorder (stacks on, default options) and
// reports the trace's bytes per event.
void BM_ChurnTraceSize(benchmark::State& state) {
  std::string path = "/tmp/memtrail-bench-churn-" + std::to_string(getpid()) + ".mtr";
  std::uint64_t bytes = 0, events = 0;
  for (auto _ : state) {
    memtrail::RecorderOptions o;
    o.output = path;
    o.stacks = state.range(0) != 0;
    if (!memtrail::start(o)) std::abort();
    churn(2'000'000, memtrail::heap_pool());
    memtrail::stop();
    state.PauseTiming();
    Count c;
    memtrail::TraceReader reader(path);
    reader.read(c);
    bytes = file_size(path);
    events = c.events;
    state.ResumeTiming();
  }
  std::remove(path.c_str());
  state.counters["events"] = static_cast<double>(events);
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["bytes_per_event"] = static_cast<double>(bytes) / static_cast<double>(events);
}
BENCHMARK(BM_ChurnTraceSize)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->Iterations(1);

// Codec speed alone: encode / decode a synthetic churn event stream.
std::vector<memtrail::Event> churn_events(std::size_t pairs) {
  std::vector<memtrail::Event> v;
  Rng rng{7};
  std::uint64_t t = 0;
  std::uint64_t ring[kRingSlots] = {};
  for (std::size_t i = 0; i < pairs; ++i) {
    std::uint64_t size = pick_size(rng);
    std::uint64_t addr = 0x5555'0000'0000 + (rng.next() % 65536) * 16;
    t += 40 + rng.next() % 60;
    v.push_back({t, 1, 1, 1 + static_cast<std::uint32_t>(i % 4), memtrail::EventKind::alloc, 1,
                 addr, size, size, 0});
    std::uint64_t victim = addr;
    if (i % 2) std::swap(victim, ring[(i / 2) % kRingSlots]);
    t += 40 + rng.next() % 60;
    if (victim) v.push_back({t, 1, 1, 5, memtrail::EventKind::free, 9, victim, 0, 0, 0});
  }
  return v;
}

void BM_EncodeChurn(benchmark::State& state) {
  auto events = churn_events(500'000);
  std::string path = "/tmp/memtrail-bench-encode-" + std::to_string(getpid()) + ".mtr";
  std::uint64_t bytes = 0;
  for (auto _ : state) {
    memtrail::TraceWriter w(path, memtrail::TraceHeader{});
    w.add_thread({1, 1, "main"});
    w.add_pool({1, 0, "malloc", memtrail::PoolKind::heap, memtrail::MemorySpace::host, -1});
    for (std::uint32_t s = 1; s <= 5; ++s) w.add_stack_node({s, 0, 0x400000u + s});
    for (const auto& e : events) w.add_event(e);
    w.finish();
    bytes = w.bytes_written();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(events.size()));
  state.counters["bytes_per_event"] =
      static_cast<double>(bytes) / static_cast<double>(events.size());
  std::remove(path.c_str());  // a benchmark leaves nothing behind in /tmp
}
BENCHMARK(BM_EncodeChurn)->Unit(benchmark::kMillisecond);

void BM_DecodeChurn(benchmark::State& state) {
  auto events = churn_events(500'000);
  std::string path = "/tmp/memtrail-bench-decode-" + std::to_string(getpid()) + ".mtr";
  {
    memtrail::TraceWriter w(path, memtrail::TraceHeader{});
    w.add_thread({1, 1, "main"});
    w.add_pool({1, 0, "malloc", memtrail::PoolKind::heap, memtrail::MemorySpace::host, -1});
    for (std::uint32_t s = 1; s <= 5; ++s) w.add_stack_node({s, 0, 0x400000u + s});
    for (const auto& e : events) w.add_event(e);
  }
  for (auto _ : state) {
    Count c;
    memtrail::TraceReader reader(path);
    if (!reader.read(c).ok || c.events != events.size()) std::abort();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(events.size()));
  std::remove(path.c_str());
}
BENCHMARK(BM_DecodeChurn)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "--churn") == 0) {
    long pairs = std::atol(argv[2]);
    if (argc >= 4) {
      memtrail::RecorderOptions o;
      o.output = argv[3];
      if (!memtrail::start(o)) return 2;
    }
    churn(pairs, memtrail::heap_pool());
    memtrail::stop();
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
