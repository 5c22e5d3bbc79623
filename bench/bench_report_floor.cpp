// The floor of `memtrail report`'s event pass, each part alone, on a real
// trace (docs/BENCHMARKS.md, "Floor: report speed"):
//   BM_FloorZstd     zstd decompression of the trace's chunks
//   BM_FloorDecode   read() into a visitor that drops the events: zstd, the
//                    codec's decode and the reader's table checks, one thread
//   BM_FloorLiveSet  each alloc and free of the trace as one insert or erase
//                    in the Engine's live-block map (AddressMap<LiveBlock>)
//                    at the trace's own live-set size and address order
//   BM_FloorEngine   the Engine alone over the trace's events, decoded
//                    beforehand into memory (the first kEngineEvents)
//   BM_FloorStream   one read of those events from memory: BM_FloorEngine
//                    pays it, the pipeline (events handed over in batches
//                    that stay in L2) does not
// Each reports "ns/event": cpu time over the trace's events (cpu, not wall:
// the machine is shared). The least exact report must decompress, decode
// and keep the live set; the Engine's other work is what the report
// computes from it.
// Usage: MEMTRAIL_BENCH_TRACE=FILE.mtr bench_report_floor
#include <benchmark/benchmark.h>
#include <zstd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine.hpp"
#include "flat_map.hpp"
#include "format_layout.hpp"
#include "live_block.hpp"
#include "memtrail/trace_file.hpp"

namespace {

using memtrail::Event;
using memtrail::EventKind;
namespace fmt = memtrail::format;

const char* trace_path() {
  const char* p = std::getenv("MEMTRAIL_BENCH_TRACE");
  return p && *p ? p : nullptr;
}

struct CompressedChunk {
  std::size_t at = 0, stored = 0, raw = 0;
};

// The whole file and where its data chunks lie: u8 type, u32 stored, u32
// raw, u32 events, u32 crc, payload, u32 crc after the header
// (format_layout.hpp; bench/trace_bytes.cpp reads it the same way).
struct TraceBytes {
  std::string file;
  std::vector<CompressedChunk> chunks;
  std::uint64_t events = 0;
};

std::uint32_t le32(const std::string& s, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

const TraceBytes& trace_bytes() {
  static const TraceBytes t = [] {
    TraceBytes b;
    std::ifstream in(trace_path(), std::ios::binary);
    b.file.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    std::size_t at = 8 + 2 + 2;
    at += 4 + le32(b.file, at) + 4;  // header payload and its crc
    while (at + fmt::kFrameHeaderBytes <= b.file.size()) {
      const auto type = static_cast<std::uint8_t>(b.file[at]);
      CompressedChunk c{at + fmt::kFrameHeaderBytes, le32(b.file, at + 1), le32(b.file, at + 5)};
      if (type == fmt::kChunkData) {
        b.chunks.push_back(c);
        b.events += le32(b.file, at + 9);
      }
      at = c.at + c.stored + fmt::kFrameTrailerBytes;
    }
    return b;
  }();
  return t;
}

void per_event(benchmark::State& state, std::uint64_t events) {
  state.counters["ns/event"] = benchmark::Counter(
      static_cast<double>(events) * static_cast<double>(state.iterations()) * 1e-9,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_FloorZstd(benchmark::State& state) {
  const TraceBytes& t = trace_bytes();
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  std::string out;
  for (auto _ : state)
    for (const CompressedChunk& c : t.chunks) {
      out.resize(c.raw);
      std::size_t n = ZSTD_decompressDCtx(dctx, out.data(), c.raw, t.file.data() + c.at, c.stored);
      if (ZSTD_isError(n)) state.SkipWithError("undecodable chunk");
      benchmark::DoNotOptimize(out.data());
    }
  ZSTD_freeDCtx(dctx);
  per_event(state, t.events);
}

// Takes the decoded events in batches, as the analyzer's pipeline does, and
// drops them.
struct DroppingVisitor : memtrail::TraceVisitor {
  std::vector<Event> batch = std::vector<Event>(4096);
  std::uint64_t events = 0;
  std::span<Event> event_buffer() override { return batch; }
  void events_stored(std::size_t n) override { events += n; }
  void on_event(const Event&) override { ++events; }
};

void BM_FloorDecode(benchmark::State& state) {
  std::uint64_t events = 0;
  for (auto _ : state) {
    DroppingVisitor v;
    memtrail::TraceReader reader(trace_path());
    memtrail::ReadResult r = reader.read(v);
    if (!r.ok) state.SkipWithError(r.error.c_str());
    events = v.events;
  }
  per_event(state, events);
}

// The trace's events kept in memory, with the records the Engine needs
// first (pools, threads; stack nodes are not read on the event path).
struct KeptEvents : memtrail::TraceVisitor {
  static constexpr std::size_t kEngineEvents = 4'000'000;
  std::vector<Event> events;
  std::vector<memtrail::PoolInfo> pools;
  std::uint64_t total = 0;
  void on_pool(const memtrail::PoolInfo& p) override { pools.push_back(p); }
  void on_event(const Event& e) override {
    ++total;
    if (events.size() < kEngineEvents) events.push_back(e);
  }
};

const KeptEvents& kept_events() {
  static const KeptEvents k = [] {
    KeptEvents v;
    memtrail::TraceReader(trace_path()).read(v);
    return v;
  }();
  return k;
}

// The trace's allocs and frees as the live-block map sees them: the
// address, its low bit set for a free (blocks are 2-aligned). 8 bytes an
// event, not the Event's 48: streamed from memory, the Events cost more
// than the map itself on tight-pairs.
const std::vector<std::uint64_t>& block_ops() {
  static const std::vector<std::uint64_t> ops = [] {
    std::vector<std::uint64_t> v;
    for (const Event& e : kept_events().events) {
      if (e.kind == EventKind::alloc || e.kind == EventKind::reuse) v.push_back(e.address & ~1ull);
      if (e.kind == EventKind::free) v.push_back(e.address | 1);
    }
    return v;
  }();
  return ops;
}

void BM_FloorLiveSet(benchmark::State& state) {
  const std::vector<std::uint64_t>& ops = block_ops();
  for (auto _ : state) {
    memtrail::detail::AddressMap<memtrail::detail::LiveBlock> live;
    memtrail::detail::LiveBlock taken;
    for (std::uint64_t op : ops) {
      if (op & 1)
        live.take(op & ~1ull, taken);
      else
        live.try_emplace(op).first->size = op;
    }
    benchmark::DoNotOptimize(live.size());
  }
  per_event(state, kept_events().events.size());
}

void BM_FloorStream(benchmark::State& state) {
  const KeptEvents& k = kept_events();
  for (auto _ : state) {
    std::uint64_t sum = 0;
    for (const Event& e : k.events) sum += e.address ^ e.size;
    benchmark::DoNotOptimize(sum);
  }
  per_event(state, k.events.size());
}

void BM_FloorEngine(benchmark::State& state) {
  const KeptEvents& k = kept_events();
  memtrail::AnalysisOptions o;
  o.symbolize = false;
  for (auto _ : state) {
    auto engine = std::make_unique<memtrail::detail::Engine>(o, memtrail::ProgressFn{});
    for (const memtrail::PoolInfo& p : k.pools) engine->on_pool(p);
    engine->on_events(k.events.data(), k.events.size());
    state.PauseTiming();
    engine.reset();  // its teardown is not the pass's
    state.ResumeTiming();
  }
  per_event(state, k.events.size());
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (!trace_path()) {
    std::fprintf(stderr, "bench_report_floor: set MEMTRAIL_BENCH_TRACE=FILE.mtr\n");
    return 2;
  }
  benchmark::RegisterBenchmark("BM_FloorZstd", BM_FloorZstd)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_FloorDecode", BM_FloorDecode)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_FloorLiveSet", BM_FloorLiveSet)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_FloorStream", BM_FloorStream)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_FloorEngine", BM_FloorEngine)->Unit(benchmark::kMillisecond);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
