// Pins the encoding: one fixed event stream, written by TraceWriter, must
// decompress to the same chunk bytes forever (unless the format version
// changes on purpose). The hashes below were taken from main at f559c8d,
// before the codec's prediction model was rewritten as one set of rules
// (tracer/src/codec/), so a refactor that changes a single byte fails here.
// Changed on purpose once since: stack node records by differences
// (kTagStackNodeDelta, 2026-12-07), the events' bytes unchanged.
// The stream imitates glibc's allocator (per-class LIFO free lists, blocks
// carved back to back from a top chunk, frees of random live blocks) on
// several threads, so every prediction path (class candidates, fresh ends,
// recent frees past their window, size slots, stack codes, time going back,
// tracked and untracked frees, the model switched off and on) is taken.
#include <gtest/gtest.h>
#include <zstd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "memtrail/trace_file.hpp"
#include "trace_collector.hpp"

namespace memtrail {
namespace {

std::uint64_t class_of(std::uint64_t size) {  // glibc's chunk size
  std::uint64_t c = (size + 8 + 15) & ~std::uint64_t{15};
  return c < 32 ? 32 : c;
}

// A toy glibc: per-thread arenas with LIFO free lists per chunk class and a
// top chunk; sometimes a block of another class is handed out (a split).
struct ToyHeap {
  struct Arena {
    std::uint64_t top;
    std::map<std::uint64_t, std::vector<std::uint64_t>> free_by_class;
    std::vector<std::uint64_t> any_free;
  };
  std::vector<Arena> arenas;
  std::mt19937_64& rng;
  ToyHeap(int threads, std::mt19937_64& r) : rng(r) {
    for (int t = 0; t < threads; ++t)
      arenas.push_back(Arena{0x5500'0000'0000ull + (std::uint64_t(t) << 32), {}, {}});
  }
  std::uint64_t alloc(int thread, std::uint64_t size) {
    Arena& a = arenas[thread];
    auto& list = a.free_by_class[class_of(size)];
    if (!list.empty() && rng() % 8 != 0) {
      std::uint64_t address = list.back();
      list.pop_back();
      return address;
    }
    if (!a.any_free.empty() && rng() % 4 == 0) {  // another class's block
      std::size_t j = rng() % a.any_free.size();
      std::uint64_t address = a.any_free[j];
      a.any_free[j] = a.any_free.back();
      a.any_free.pop_back();
      return address;
    }
    std::uint64_t address = a.top;
    a.top += class_of(size);
    return address;
  }
  void free(int thread, std::uint64_t address, std::uint64_t size) {
    Arena& a = arenas[thread];
    if (rng() % 5 == 0)
      a.any_free.push_back(address);
    else
      a.free_by_class[class_of(size)].push_back(address);
  }
};

struct Live {
  std::uint64_t address, size;
  std::uint32_t pool;
  TraceWriter::BlockRef ref;
};

std::uint64_t pick_size(std::mt19937_64& rng) {
  switch (rng() % 6) {
    case 0:
      return 16 + rng() % 48;
    case 1:
      return 24;
    case 2:
      return 8u << (rng() % 12);
    case 3:
      return 100 + rng() % 2000;
    case 4:
      return 64;
    default:
      return rng() % 200'000;
  }
}

// Writes the fixed stream to `path`; `model_switches` toggles the writer's
// address model every so many events (0: never).
std::vector<Event> write_stream(const std::string& path, int model_switches) {
  std::vector<Event> written;
  std::mt19937_64 rng(20261207);
  constexpr int kThreads = 5;
  ToyHeap heap(kThreads, rng);
  std::vector<Live> live[kThreads];
  std::uint64_t time[kThreads] = {};
  TraceHeader h;
  h.pid = 7;
  h.command_line = "golden";
  TraceWriter w(path, h);
  for (std::uint32_t t = 1; t <= kThreads; ++t) w.add_thread({t, 100 + t, "t"});
  w.add_pool({1, 0, "malloc", PoolKind::heap, MemorySpace::host, -1});
  w.add_pool({2, 0, "other", PoolKind::heap, MemorySpace::host, -1});
  for (std::uint32_t n = 1; n <= 40; ++n) w.add_stack_node({n, n / 2, 0x400000 + 16 * n});
  bool model = true;
  for (int i = 0; i < 400'000; ++i) {
    if (model_switches && i % model_switches == model_switches - 1)
      w.set_address_model(model = !model);
    int th = static_cast<int>(rng() % 16 < 10 ? 0 : rng() % kThreads);  // runs of thread 0
    Event e;
    e.thread = static_cast<std::uint32_t>(th + 1);
    time[th] += rng() % 32 == 0 ? -(rng() % 100) : rng() % 2000;
    e.time_ns = time[th];
    e.stack = static_cast<std::uint32_t>(rng() % 3 == 0 ? rng() % 41 : 1 + (i & 1));
    std::vector<Live>& mine = live[th];
    unsigned what = rng() % 20;
    if (what < 9 || mine.empty()) {
      e.kind = what == 0 ? EventKind::reuse : EventKind::alloc;
      e.pool = rng() % 50 == 0 ? 2 : 1;
      e.size = pick_size(rng);
      e.requested = rng() % 10 == 0 ? e.size - rng() % 8 : e.size;
      e.address = e.size == 0 && rng() % 2 ? 0 : heap.alloc(th, e.size);
      e.detail = static_cast<std::uint8_t>(rng() % 4 == 0 ? 1 : 0);
      Live block{e.address, e.size, e.pool, {}};
      if (e.pool == 1)
        w.add_tracked_event(e, block.ref, e.size);
      else
        w.add_event(e);
      written.push_back(e);
      if (e.address != 0) mine.push_back(block);
    } else if (what < 18) {
      std::size_t j = rng() % 4 == 0 ? rng() % mine.size() : mine.size() - 1;
      Live block = mine[j];
      mine[j] = mine.back();
      mine.pop_back();
      e.kind = EventKind::free;
      e.pool = block.pool;
      e.address = block.address;
      e.size = rng() % 3 == 0 ? 0 : block.size;
      heap.free(th, block.address, block.size);
      if (block.pool == 1)
        w.add_tracked_event(e, block.ref, block.size);
      else
        w.add_event(e);
      written.push_back(e);
    } else {
      e.kind = what == 18 ? EventKind::sample : EventKind::mark;
      e.address = rng() % 1000000;
      e.size = rng() % 3 == 0 ? 0 : rng();
      e.aux =
          e.kind == EventKind::sample && rng() % 2 ? rng() % 1000 : 0;  // a mark's names a string
      w.add_event(e);
      written.push_back(e);
    }
    if (i % 150'000 == 149'999) w.flush();
  }
  w.finish();
  return written;
}

struct Digest {
  std::uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a 64
  std::uint64_t chunks = 0, events = 0, raw_bytes = 0;
  void add(const void* data, std::size_t n) {
    auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) hash = (hash ^ p[i]) * 0x100000001b3ull;
  }
};

std::uint32_t le32(const unsigned char* p) {
  return p[0] | p[1] << 8 | p[2] << 16 | std::uint32_t{p[3]} << 24;
}

// The FNV-1a hash of every chunk frame's type, event count and decompressed
// payload, in file order: the encoder's bytes, not zstd's.
Digest digest_chunks(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  EXPECT_NE(f, nullptr);
  std::string file;
  char buf[1 << 16];
  for (std::size_t n; f && (n = std::fread(buf, 1, sizeof buf, f)) > 0;) file.append(buf, n);
  if (f) std::fclose(f);
  Digest d;
  auto* p = reinterpret_cast<const unsigned char*>(file.data());
  std::size_t at = 16 + le32(p + 12) + 4, size = file.size();  // past the header
  std::string raw;
  while (at + 17 <= size) {
    std::uint8_t type = p[at];
    std::uint32_t stored = le32(p + at + 1), raw_size = le32(p + at + 5), events = le32(p + at + 9);
    if (at + 17 + stored + 4 > size) {
      ADD_FAILURE() << "frame past the end at " << at;
      break;
    }
    raw.resize(raw_size);
    if (raw_size > 0) {
      std::size_t got = ZSTD_decompress(raw.data(), raw.size(), p + at + 17, stored);
      EXPECT_EQ(got, raw_size) << "chunk at " << at;
    }
    d.add(&type, 1);
    d.add(&events, 4);
    d.add(raw.data(), raw.size());
    ++d.chunks;
    d.events += type == 1 ? events : 0;
    d.raw_bytes += raw_size;
    at += 17 + stored + 4;
  }
  EXPECT_EQ(at, size) << "trailing bytes";
  return d;
}

void expect_golden(int model_switches, std::uint64_t hash, std::uint64_t raw_bytes) {
  test::TempFile file("codec-golden.mtr");
  std::vector<Event> written = write_stream(file.path, model_switches);
  Digest d = digest_chunks(file.path);
  EXPECT_EQ(d.events, 400'000u);
  EXPECT_GT(d.chunks, 4u);
  EXPECT_EQ(d.raw_bytes, raw_bytes);
  EXPECT_EQ(d.hash, hash) << std::hex << "0x" << d.hash << std::dec << " over " << d.chunks
                          << " chunks, " << d.raw_bytes << " raw bytes";
  // And the stream still reads back exactly.
  test::Collected c;
  ReadResult r = test::read_trace(file.path, c);
  EXPECT_TRUE(r.ok) << r.error;
  ASSERT_EQ(c.events.size(), written.size());
  for (std::size_t i = 0; i < written.size(); ++i)
    ASSERT_EQ(c.events[i], written[i]) << "event " << i;
}

TEST(CodecGolden, ModelOnEncodesTheSameBytes) {
  expect_golden(0, 0xd469769b8c169715ull, 3'776'344);
}

TEST(CodecGolden, ModelSwitchingEncodesTheSameBytes) {
  expect_golden(70'001, 0xb0450ed029b45b64ull, 4'010'172);
}

}  // namespace
}  // namespace memtrail
