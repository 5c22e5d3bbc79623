// The parts of a repeated-stack event's cost, each alone (issue 28: "the
// measured floor of the part that binds"; docs/BENCHMARKS.md, "Floor: added
// cpu per repeated-stack event"):
//   program thread: one time stamp (rdtscp, as SessionClock::raw_now, beside
//     the reads it could be), one unw_backtrace of 12, 20 and 30 frames (a
//     stack cache miss), one stack-cache hit (StackCache::find over a chain of 5 and
//     20 frames), one 32-byte event store (the recorder's append fast path);
//   writer thread: one event's encode (TraceWriter::add_tracked_event, the
//     call the drain makes), and zstd level 1 per raw input byte, with the
//     raw bytes an event adds: on a synthetic tight-pairs stream, or on the
//     first 10^6 events of a real trace (MEMTRAIL_BENCH_TRACE=FILE.mtr).
#include <benchmark/benchmark.h>
#include <libunwind.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <unordered_map>
#include <vector>

#include "memtrail/trace_file.hpp"
#include "stack_cache.hpp"

namespace {

// ---- time stamps ------------------------------------------------------------

void BM_StampRdtscp(benchmark::State& state) {
  unsigned aux;
  for (auto _ : state) benchmark::DoNotOptimize(__rdtscp(&aux));
}
BENCHMARK(BM_StampRdtscp);

void BM_StampRdtsc(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(__rdtsc());
}
BENCHMARK(BM_StampRdtsc);

void BM_StampLfenceRdtsc(benchmark::State& state) {
  for (auto _ : state) {
    _mm_lfence();
    benchmark::DoNotOptimize(__rdtsc());
  }
}
BENCHMARK(BM_StampLfenceRdtsc);

template <clockid_t Clock>
void BM_StampClock(benchmark::State& state) {
  timespec ts;
  for (auto _ : state) {
    clock_gettime(Clock, &ts);
    benchmark::DoNotOptimize(ts);
  }
}
BENCHMARK(BM_StampClock<CLOCK_MONOTONIC>)->Name("BM_StampClockMonotonic");
BENCHMARK(BM_StampClock<CLOCK_MONOTONIC_COARSE>)->Name("BM_StampClockMonotonicCoarse");

// ---- unwinding (a stack cache miss) ----------------------------------------

// Recurses `depth` frames, then runs `leaf` there.
template <typename Leaf>
__attribute__((noinline)) void at_depth(int depth, Leaf& leaf) {
  if (depth > 0)
    at_depth(depth - 1, leaf);
  else
    leaf();
  asm volatile("" ::: "memory");  // not a tail call: each level keeps a frame
}

void BM_UnwBacktrace(benchmark::State& state) {
  void* ips[64];
  int got = 0;
  auto leaf = [&] { got = unw_backtrace(ips, 64); };
  // The frames above the benchmark's own (its loop, main, libc's start).
  at_depth(0, leaf);
  int extra = std::max(0, static_cast<int>(state.range(0)) - got);
  for (auto _ : state) at_depth(extra, leaf);
  state.counters["frames"] = got;
}
// Frames in all, the benchmark's own below the recursion included (about
// a dozen: the fewest it can show).
BENCHMARK(BM_UnwBacktrace)->Arg(12)->Arg(20)->Arg(30);

// ---- stack cache hit --------------------------------------------------------

// One valid chain of `depth` frames in a fake stack: return address k at the
// slot a frame of 48 bytes per level would give it. StackCache::find checks
// the key, then every slot (valid()), as on every repeated-stack event.
void BM_StackCacheHit(benchmark::State& state) {
  const int depth = static_cast<int>(state.range(0));
  auto* cache = static_cast<memtrail::runtime::StackCache*>(
      std::calloc(1, sizeof(memtrail::runtime::StackCache)));
  std::vector<std::uint64_t> stack(64 * 6 + 16);
  auto frame = reinterpret_cast<std::uintptr_t>(stack.data());
  const void* entry = &stack;  // any allocator entry point
  auto& e = cache->victim(frame, entry, 0);
  e.key_frame = frame;
  e.entry = entry;
  e.checks = static_cast<std::uint16_t>(depth);
  e.first = 1;
  e.count = static_cast<std::uint16_t>(depth);
  for (int k = 0; k < depth; ++k) {
    e.slot[k] = (k + 1) * 48 - 8;
    e.ip[k] = 0x401000u + 0x40u * k;
    stack[e.slot[k] / 8] = e.ip[k];
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(frame);
    const auto* hit = cache->find(frame, entry, 0, 0);
    if (!hit) std::abort();
    benchmark::DoNotOptimize(hit->hash);
  }
  std::free(cache);
}
BENCHMARK(BM_StackCacheHit)->Arg(5)->Arg(20);

// ---- the event store --------------------------------------------------------

// One 32-byte event at block + pos, as recorder.cpp `append` stores it.
inline void store_event(unsigned char* block, std::uint32_t pos, std::uint64_t t) {
  auto* out = reinterpret_cast<std::uint64_t*>(block + pos);
  out[0] = t;
  out[1] = 0x5555'0000'1000;
  out[2] = 64;
  out[3] = 0x0001'0000'0101;
}

// The recorder's append fast path (recorder.cpp `append`): four 8-byte
// stores into the thread's block, the position, the made-count, and the
// release store of `used` the writer reads. Blocks of 64 KiB, reused.
void BM_EventStore32(benchmark::State& state) {
  constexpr std::uint32_t kCapacity = 64 * 1024;
  alignas(64) static unsigned char block[kCapacity];
  std::atomic<std::uint32_t> used{0};
  std::uint64_t made = 0;
  std::uint32_t pos = 0;
  std::uint64_t t = 1;
  for (auto _ : state) {
    if (pos + 32 > kCapacity) pos = 0;
    store_event(block, pos, t++);
    pos += 32;
    ++made;
    used.store(pos, std::memory_order_release);
    benchmark::ClobberMemory();
  }
  benchmark::DoNotOptimize(made);
}
BENCHMARK(BM_EventStore32);

// The same stores into a block whose pages were given back (MADV_DONTNEED,
// as BlockPool does past its warm blocks): each 4 KiB page faults in again
// (zeroed by the kernel) once per 128 events. Per event, as above.
void BM_EventStore32ColdBlock(benchmark::State& state) {
  constexpr std::size_t kBytes = 128 * 1024;
  void* map = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) std::abort();
  auto* block = static_cast<unsigned char*>(map);
  std::atomic<std::uint32_t> used{0};
  std::uint32_t pos = kBytes;
  std::uint64_t t = 1;
  for (auto _ : state) {
    if (pos + 32 > kBytes) {
      madvise(block, kBytes, MADV_DONTNEED);
      pos = 0;
    }
    store_event(block, pos, t++);
    pos += 32;
    used.store(pos, std::memory_order_release);
    benchmark::ClobberMemory();
  }
  munmap(map, kBytes);
}
BENCHMARK(BM_EventStore32ColdBlock);

// ---- the writer: encode, zstd -----------------------------------------------

// An event stream as the drain hands it to the writer, with the block
// reference each alloc/free uses (the live-heap map keeps one per block;
// here a slot per block, looked up before timing).
struct Stream {
  std::vector<memtrail::ThreadInfo> threads;
  std::vector<memtrail::PoolInfo> pools;
  std::vector<memtrail::StackNode> nodes;
  std::vector<memtrail::Event> events;
  std::vector<std::uint32_t> ref_slot;    // per event
  std::vector<std::uint64_t> freed_size;  // per event: the block's size at a free
  std::size_t slots = 0;
};

void assign_ref_slots(Stream& s) {
  std::unordered_map<std::uint64_t, std::pair<std::uint32_t, std::uint64_t>> live;
  for (const auto& e : s.events) {
    std::uint32_t slot = 0;
    std::uint64_t size = 0;
    if (e.kind == memtrail::EventKind::alloc || e.kind == memtrail::EventKind::reuse) {
      slot = static_cast<std::uint32_t>(++s.slots);
      live[e.address] = {slot, e.size};
    } else if (e.kind == memtrail::EventKind::free) {
      if (auto it = live.find(e.address); it != live.end()) {
        slot = it->second.first;
        size = it->second.second;
        live.erase(it);
      }
    }
    s.ref_slot.push_back(slot);
    s.freed_size.push_back(size);
  }
}

// tight-pairs' shape, when no real trace is given: alloc and free of one of
// a few addresses (glibc's tcache gives the same block back), sizes 16-64 B,
// one stack, 20-50 ns apart.
Stream synthetic_tight_pairs(std::size_t pairs) {
  Stream s;
  s.threads.push_back({1, 1, "main"});
  s.pools.push_back({1, 0, "malloc", memtrail::PoolKind::heap, memtrail::MemorySpace::host, -1});
  s.nodes.push_back({1, 0, 0x401000});
  std::uint64_t t = 0, x = 42;
  for (std::size_t i = 0; i < pairs; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    std::uint64_t size = 16 + (x >> 40) % 49;
    std::uint64_t addr = 0x5555'0000'2a0 + ((size + 15) / 16) * 0x50;
    t += 20 + (x >> 50) % 30;
    s.events.push_back({t, 1, 1, 1, memtrail::EventKind::alloc, 1, addr, size, size, 0});
    t += 20 + (x >> 52) % 30;
    s.events.push_back({t, 1, 1, 1, memtrail::EventKind::free, 9, addr, 0, 0, 0});
  }
  return s;
}

// A real trace's first `limit` events and its tables
// (MEMTRAIL_BENCH_TRACE=FILE: e.g. `memtrail run -o DIR -- tight_pairs 500000`).
struct Collect : memtrail::TraceVisitor {
  Stream& s;
  std::size_t limit;
  Collect(Stream& out, std::size_t n) : s(out), limit(n) {}
  void on_thread(const memtrail::ThreadInfo& t) override { s.threads.push_back(t); }
  void on_pool(const memtrail::PoolInfo& p) override { s.pools.push_back(p); }
  void on_stack_node(const memtrail::StackNode& n) override { s.nodes.push_back(n); }
  void on_event(const memtrail::Event& e) override {
    if (s.events.size() < limit) s.events.push_back(e);
  }
};

const Stream& stream() {
  static Stream s = [] {
    Stream out;
    if (const char* path = std::getenv("MEMTRAIL_BENCH_TRACE")) {
      Collect c(out, 1'000'000);
      memtrail::TraceReader reader(path);
      if (!reader.read(c).ok || out.events.empty()) std::abort();
    } else {
      out = synthetic_tight_pairs(500'000);
    }
    assign_ref_slots(out);
    return out;
  }();
  return s;
}

// Writes the stream as the recorder's writer does (add_tracked_event with
// the block's stored reference), with the glibc address model on or off
// (the writer turns it off while it is behind: writer_thread.cpp).
std::uint64_t write_tracked(const std::string& path, const Stream& s, bool model = true) {
  memtrail::TraceWriter w(path, memtrail::TraceHeader{});
  w.set_address_model(model);
  for (const auto& t : s.threads) w.add_thread(t);
  for (const auto& p : s.pools) w.add_pool(p);
  for (const auto& n : s.nodes) w.add_stack_node(n);
  std::vector<memtrail::TraceWriter::BlockRef> refs(s.slots + 1);
  for (std::size_t i = 0; i < s.events.size(); ++i)
    w.add_tracked_event(s.events[i], refs[s.ref_slot[i]], s.freed_size[i]);
  w.finish();
  return w.bytes_written();
}

// The stream() and a trace file of it in /tmp, written as the recorder's
// writer does; the file goes with it (a benchmark leaves nothing in /tmp).
struct StreamTrace {
  const Stream& stream = ::stream();
  const std::string path;

  explicit StreamTrace(const char* what)
      : path("/tmp/memtrail-bench-hot-" + std::string(what) + "-" + std::to_string(getpid()) +
             ".mtr") {}
  ~StreamTrace() { std::remove(path.c_str()); }
  std::uint64_t write(bool model = true) const { return write_tracked(path, stream, model); }

  // Items: the stream's events, so rates read per event.
  void count_events(benchmark::State& state) const {
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(stream.events.size()));
  }
  double per_event(std::uint64_t total) const {
    return static_cast<double>(total) / static_cast<double>(stream.events.size());
  }
};

// One event's encode plus its share of zstd and the chunk's write; the
// argument: the address model on (1) or off (0).
void BM_EncodeAndCompress(benchmark::State& state) {
  const StreamTrace trace("encode");
  std::uint64_t bytes = 0;
  for (auto _ : state) bytes = trace.write(state.range(0) != 0);
  trace.count_events(state);
  state.counters["bytes_per_event"] = trace.per_event(bytes);
}
BENCHMARK(BM_EncodeAndCompress)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

// The chunks' raw payloads of a trace: every zstd frame in the file
// (found by its magic number and checked by decompressing it whole).
std::vector<std::string> raw_chunks(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> chunks;
  const char magic[4] = {'\x28', '\xb5', '\x2f', '\xfd'};
  for (std::size_t at = 0; (at = file.find(std::string(magic, 4), at)) != std::string::npos;) {
    std::size_t n = ZSTD_findFrameCompressedSize(file.data() + at, file.size() - at);
    unsigned long long raw = ZSTD_getFrameContentSize(file.data() + at, file.size() - at);
    if (ZSTD_isError(n) || raw == ZSTD_CONTENTSIZE_ERROR || raw == ZSTD_CONTENTSIZE_UNKNOWN) {
      ++at;
      continue;
    }
    std::string out(raw, '\0');
    if (ZSTD_isError(ZSTD_decompress(out.data(), out.size(), file.data() + at, n))) {
      ++at;
      continue;
    }
    chunks.push_back(std::move(out));
    at += n;
  }
  return chunks;
}

// zstd over the raw chunks the writer made of the stream, at the level of
// the argument (the writer's is 1: format_layout.hpp's kZstdLevel; -1 and
// 3 beside it): ns per event and per raw byte, compressed bytes per event.
void BM_Zstd(benchmark::State& state) {
  const int level = static_cast<int>(state.range(0));
  const StreamTrace trace("zstd");
  trace.write();
  const auto chunks = raw_chunks(trace.path);
  std::size_t raw = 0;
  for (const auto& c : chunks) raw += c.size();
  if (chunks.empty()) std::abort();
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  std::string out;
  std::size_t packed = 0;
  for (auto _ : state) {
    packed = 0;
    for (const auto& c : chunks) {
      out.resize(ZSTD_compressBound(c.size()));
      std::size_t n = ZSTD_compressCCtx(cctx, out.data(), out.size(), c.data(), c.size(), level);
      if (ZSTD_isError(n)) std::abort();
      packed += n;
    }
  }
  ZSTD_freeCCtx(cctx);
  trace.count_events(state);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(raw));
  state.counters["raw_bytes_per_event"] = trace.per_event(raw);
  state.counters["zstd_bytes_per_event"] = trace.per_event(packed);
}
BENCHMARK(BM_Zstd)->Arg(1)->Arg(-1)->Arg(3)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
