// Analyzer throughput. Google Benchmark cases read a synthesized churn trace
// (reader alone, then the full analysis); `bench_analyzer synth FILE N`
// writes an N-event churn trace for the 10^8-event run in BENCHMARKS.md
// (`/usr/bin/time -v memtrail report FILE`).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "memtrail/analysis.hpp"
#include "memtrail/trace_file.hpp"

namespace {

// Like samples/churn: 2 threads, log-uniform sizes 8 B..64 KiB, even
// allocations freed at once, odd ones through a 256-slot ring; 64 distinct
// call paths of depth 2..20.
void synthesize(const std::string& path, std::uint64_t events) {
  memtrail::TraceHeader h;
  h.command_line = "bench_analyzer synth";
  memtrail::TraceWriter w(path, h);
  w.add_thread({1, 1, "t1"});
  w.add_thread({2, 2, "t2"});
  w.add_pool({1, 0, "malloc", memtrail::PoolKind::heap, memtrail::MemorySpace::host, -1});
  std::uint32_t next_node = 1;
  std::uint32_t leaf[64];
  for (int path_id = 0; path_id < 64; ++path_id) {
    std::uint32_t parent = 0;
    int depth = 2 + path_id % 19;
    for (int d = 0; d < depth; ++d) {
      w.add_stack_node({next_node, parent, 0x400000u + 0x40u * (d * 64 + path_id)});
      parent = next_node++;
    }
    leaf[path_id] = parent;
  }
  std::uint64_t rng = 42, ring[2][256] = {}, t = 0, addr = 0x10000000;
  std::uint64_t slot[2] = {0, 0}, n = 0;
  while (n < events) {
    for (std::uint32_t th = 1; th <= 2 && n < events; ++th) {
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      std::uint64_t size = std::uint64_t{1} << (3 + (rng >> 33) % 14);
      memtrail::Event a;
      a.time_ns = t += 50;
      a.thread = th;
      a.pool = 1;
      a.stack = leaf[(rng >> 20) % 64];
      a.kind = memtrail::EventKind::alloc;
      a.address = addr += 0x40;
      a.size = a.requested = size;
      w.add_event(a);
      ++n;
      memtrail::Event f;
      f.time_ns = t += 50;
      f.thread = th;
      f.pool = 1;
      f.kind = memtrail::EventKind::free;
      bool even = (n & 2) == 0;
      std::uint64_t& s = ring[th - 1][slot[th - 1]];
      if (even) {
        f.address = a.address;
      } else {
        f.address = s;
        s = a.address;
        slot[th - 1] = (slot[th - 1] + 1) % 256;
      }
      if (f.address != 0 && n < events) {
        w.add_event(f);
        ++n;
      }
    }
  }
  w.finish();
}

const std::string& bench_trace() {
  static std::string path = [] {
    std::string p = "/tmp/memtrail-bench-analyzer.mtr";
    synthesize(p, 4'000'000);
    return p;
  }();
  return path;
}

struct NullVisitor : memtrail::TraceVisitor {
  std::uint64_t events = 0;
  void on_event(const memtrail::Event&) override { ++events; }
};

void BM_ReadOnly4M(benchmark::State& state) {
  const std::string& path = bench_trace();
  std::uint64_t events = 0;
  for (auto _ : state) {
    NullVisitor v;
    memtrail::TraceReader r(path);
    r.read(v);
    events = v.events;
  }
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events) * state.iterations(),
                                                  benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ReadOnly4M)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Analyze4M(benchmark::State& state) {
  const std::string& path = bench_trace();
  memtrail::AnalysisOptions o;
  o.symbolize = false;
  std::uint64_t events = 0;
  for (auto _ : state) {
    memtrail::Analysis a = memtrail::analyze(path, o);
    if (!a.error.empty()) state.SkipWithError(a.error.c_str());
    events = a.summary.events;
  }
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events) * state.iterations(),
                                                  benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Analyze4M)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "synth") {
    synthesize(argv[2], std::strtoull(argv[3], nullptr, 10));
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  std::remove("/tmp/memtrail-bench-analyzer.mtr");
  return 0;
}
