// read_parallel() decodes chunks on worker threads and checks references in
// file order, read_ahead() reads and decompresses the next chunk on another
// thread, read_fed() lets the caller's thread do that (ChunkFeed), and a visitor may take events
// through a buffer: whatever the file holds, the visitor must see exactly what read() shows it, and
// the ReadResult (errors, counts, warnings) must match. Valid traces, cut files, payloads mutated
// behind valid checksums (decoder errors and dangling references inside a chunk) and early stops.
#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "memtrail/trace_file.hpp"
#include "read_fed_here.hpp"
#include "trace_collector.hpp"

namespace memtrail {
namespace {

using test::Collected;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void spit(const std::string& path, std::string_view data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

// Stops after `limit` callbacks of any kind.
struct Stopping : Collected {
  std::size_t limit;
  explicit Stopping(std::size_t n) : limit(n) {}
  bool keep_going() override { return order.size() < limit; }
};

// Takes its events through a small buffer (TraceVisitor::event_buffer): the
// reader stores them there and reports each filled stretch, before any
// record and before it returns.
struct Batching : Collected {
  Event buffer[7];
  std::span<Event> event_buffer() override { return buffer; }
  void events_stored(std::size_t n) override {
    for (std::size_t i = 0; i < n; ++i) on_event(buffer[i]);
  }
};

void expect_same(const ReadResult& a, const ReadResult& b, const std::string& what) {
  EXPECT_EQ(a.ok, b.ok) << what;
  EXPECT_EQ(a.error, b.error) << what;
  EXPECT_EQ(a.chunks, b.chunks) << what;
  EXPECT_EQ(a.events, b.events) << what;
  EXPECT_EQ(a.dropped_bytes, b.dropped_bytes) << what;
  EXPECT_EQ(a.complete, b.complete) << what;
  EXPECT_EQ(a.warning, b.warning) << what;
}

void expect_same(const Collected& a, const Collected& b, const std::string& what) {
  EXPECT_EQ(a.order, b.order) << what;
  EXPECT_EQ(a.events, b.events) << what;
  EXPECT_EQ(a.strings, b.strings) << what;
  EXPECT_EQ(a.threads, b.threads) << what;
  EXPECT_EQ(a.pools, b.pools) << what;
  EXPECT_EQ(a.stack_nodes, b.stack_nodes) << what;
  EXPECT_EQ(a.scopes, b.scopes) << what;
}

// Reads `path` with read() and with read_parallel() (several decoder counts
// and buffer caps) and expects the same. Returns read()'s result.
ReadResult read_both(const std::string& path, const std::string& what,
                     std::size_t stop_after = SIZE_MAX) {
  Stopping seq(stop_after);
  ReadResult expected = TraceReader(path).read(seq);
  // 1..3 decoders, then 2 with buffers too small for most chunks (those are
  // decoded again by the calling thread).
  for (unsigned run = 1; run <= 4; ++run) {
    unsigned decoders = run <= 3 ? run : 2;
    std::size_t cap = run <= 3 ? std::size_t{1} << 20 : 100;
    Stopping par(stop_after);
    ReadResult got = TraceReader(path).read_parallel(par, decoders, cap);
    std::string where =
        what + " (" + std::to_string(decoders) + " decoders, cap " + std::to_string(cap) + ")";
    expect_same(expected, got, where);
    expect_same(seq, par, where);
  }
  // read_ahead(): the next chunk read and decompressed on another thread.
  Stopping ahead(stop_after);
  expect_same(expected, TraceReader(path).read_ahead(ahead), what + " (read_ahead)");
  expect_same(seq, ahead, what + " (read_ahead)");
  Stopping fed(stop_after);
  expect_same(expected, test::read_fed_here(path, fed), what + " (read_fed)");
  expect_same(seq, fed, what + " (read_fed)");
  // Batch delivery asks keep_going() per batch, so only whole reads compare.
  if (stop_after == SIZE_MAX) {
    Batching direct, ahead_batched, parallel;
    expect_same(expected, TraceReader(path).read(direct), what + " (read, batches)");
    expect_same(seq, direct, what + " (read, batches)");
    expect_same(expected, TraceReader(path).read_ahead(ahead_batched),
                what + " (read_ahead, batches)");
    expect_same(seq, ahead_batched, what + " (read_ahead, batches)");
    Batching fed_batched;
    expect_same(expected, test::read_fed_here(path, fed_batched), what + " (read_fed, batches)");
    expect_same(seq, fed_batched, what + " (read_fed, batches)");
    expect_same(expected, TraceReader(path).read_parallel(parallel, 2),
                what + " (read_parallel, batches)");
    expect_same(seq, parallel, what + " (read_parallel, batches)");
  }
  return expected;
}

// Several chunks, two threads, pools, stacks, scopes and marks whose table
// records sit in different chunks from the events that use them.
void write_trace(const std::string& path, int chunks = 6) {
  TraceHeader h;
  h.command_line = "parallel";
  TraceWriter w(path, h);
  w.add_thread({1, 11, "main"});
  w.add_thread({2, 12, "worker"});
  w.add_pool({1, 0, "malloc", PoolKind::heap, MemorySpace::host, -1});
  w.add_string(1, "tick");
  std::uint32_t next_node = 1;
  std::uint64_t t = 0;
  for (int c = 0; c < chunks; ++c) {
    std::uint32_t pool = 1;
    if (c >= 2) {  // a pool defined mid-file, used from then on
      if (c == 2) w.add_pool({2, 1, "cache", PoolKind::caching, MemorySpace::host, -1});
      pool = 2;
    }
    if (c == 3) w.add_scope({1, "step", ScopeKind::iteration, 0});
    for (int k = 0; k < 3; ++k, ++next_node)
      w.add_stack_node({next_node, k == 0 ? 0 : next_node - 1, 0x400000u + 16u * next_node});
    for (int i = 0; i < 300; ++i) {
      std::uint32_t thread = 1 + (i / 50) % 2;
      std::uint64_t a = 0x10000u + 64u * static_cast<std::uint64_t>((i * 7) % 97);
      std::uint32_t stack = next_node - 1 - static_cast<std::uint32_t>(i % 3);
      w.add_event({t++, thread, pool, stack, EventKind::alloc, 0, a, 48, 40, 0});
      w.add_event({t++, thread, pool, 0, EventKind::free, 0, a, 48, 0, 0});
      if (i % 100 == 0) w.add_event({t++, thread, 0, 0, EventKind::mark, 0, 0, 0, 0, 1});
      if (c >= 3 && i % 60 == 0) {
        w.add_event({t++, thread, 0, 0, EventKind::scope_begin, 0, 0, 0, 0, 1});
        w.add_event({t++, thread, 0, 0, EventKind::scope_end, 0, 0, 0, 0, 1});
      }
    }
    w.flush();
  }
  w.finish();
}

struct FrameAt {
  std::size_t offset, stored;
  std::uint8_t type;
};

std::uint32_t le32(const std::string& s, std::size_t at) {
  std::uint32_t v;
  std::memcpy(&v, s.data() + at, 4);
  return v;
}
void put32(std::string& s, std::size_t at, std::uint32_t v) {
  std::memcpy(s.data() + at, &v, 4);
}

std::vector<FrameAt> frames_of(const std::string& file) {
  std::vector<FrameAt> out;
  std::size_t off = 16 + le32(file, 12) + 4;
  while (off + 17 <= file.size()) {
    FrameAt f{off, le32(file, off + 1), static_cast<std::uint8_t>(file[off])};
    out.push_back(f);
    off += 17 + f.stored + 4;
  }
  return out;
}

// Replaces the payload of the data frame at `f` by `raw` (recompressed), with
// valid checksums, so the reader's decoder (not its crc check) meets it.
std::string with_payload(const std::string& file, const FrameAt& f, const std::string& raw,
                         std::uint32_t declared_events) {
  std::string z(ZSTD_compressBound(raw.size()), '\0');
  z.resize(ZSTD_compress(z.data(), z.size(), raw.data(), raw.size(), 1));
  std::string header = file.substr(f.offset, 17);
  put32(header, 1, static_cast<std::uint32_t>(z.size()));
  put32(header, 5, static_cast<std::uint32_t>(raw.size()));
  put32(header, 9, declared_events);
  put32(header, 13,
        static_cast<std::uint32_t>(::crc32(0, reinterpret_cast<const Bytef*>(header.data()), 13)));
  std::string crc(4, '\0');
  put32(crc, 0,
        static_cast<std::uint32_t>(
            ::crc32(0, reinterpret_cast<const Bytef*>(z.data()), static_cast<uInt>(z.size()))));
  return file.substr(0, f.offset) + header + z + crc + file.substr(f.offset + 17 + f.stored + 4);
}

std::string payload_of(const std::string& file, const FrameAt& f) {
  std::uint32_t raw = le32(file, f.offset + 5);
  std::string out(raw, '\0');
  std::size_t n = ZSTD_decompress(out.data(), raw, file.data() + f.offset + 17, f.stored);
  EXPECT_EQ(n, raw);
  return out;
}

struct ParallelRead : ::testing::Test {
  test::TempFile path_file{"parallel.mtr"}, bad_path_file{"parallel-bad.mtr"};
  const std::string& path = path_file.path;
  const std::string& bad_path = bad_path_file.path;
};

TEST_F(ParallelRead, ValidTraceReadsTheSame) {
  write_trace(path);
  ReadResult r = read_both(path, "valid");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.chunks, 6u);
  EXPECT_GT(r.events, 6u * 600);
}

TEST_F(ParallelRead, CutFilesReadTheSame) {
  write_trace(path, 3);
  std::string full = slurp(path);
  for (std::size_t cut = 0; cut < full.size(); cut += 37) {
    spit(bad_path, std::string_view(full).substr(0, cut));
    read_both(bad_path, "cut at " + std::to_string(cut));
  }
}

TEST_F(ParallelRead, MutatedPayloadsFailTheSame) {
  write_trace(path, 4);
  std::string full = slurp(path);
  std::vector<FrameAt> frames = frames_of(full);
  ASSERT_GE(frames.size(), 5u);
  int errors = 0, references = 0;
  for (std::size_t fi : {std::size_t{0}, std::size_t{2}, std::size_t{3}}) {
    const FrameAt& f = frames[fi];
    ASSERT_EQ(f.type, 1);
    std::string raw = payload_of(full, f);
    std::uint32_t count = le32(full, f.offset + 9);
    for (std::size_t pos = 0; pos < raw.size(); pos += 1 + pos / 8) {
      for (unsigned char flip : {0x01, 0x40, 0xff}) {
        std::string bad = raw;
        bad[pos] = static_cast<char>(bad[pos] ^ flip);
        spit(bad_path, with_payload(full, f, bad, count));
        std::string what = "frame " + std::to_string(fi) + " byte " + std::to_string(pos);
        ReadResult r = read_both(bad_path, what);
        if (!r.ok) ++errors;
        if (r.error.find("reference to undefined") != std::string::npos) ++references;
        if (HasFailure()) return;
      }
    }
  }
  // The mutations reach the decoder's errors and its reference checks.
  EXPECT_GT(errors, 100);
  EXPECT_GT(references, 0);
}

TEST_F(ParallelRead, DanglingReferenceInALaterChunkIsTheSameError) {
  {
    TraceWriter w(path, TraceHeader{});
    w.add_thread({1, 1, "main"});
    w.add_pool({1, 0, "malloc", PoolKind::heap, MemorySpace::host, -1});
    for (int c = 0; c < 4; ++c) {
      for (int i = 0; i < 100; ++i)
        w.add_event({std::uint64_t(i), 1, 1, 0, EventKind::alloc, 0, 0x100u + 16u * i, 8, 8, 0});
      if (c == 2) w.add_event({200, 1, /*pool=*/7, 0, EventKind::alloc, 0, 0x10, 8, 8, 0});
      w.flush();
    }
  }
  ReadResult r = read_both(path, "dangling");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("reference to undefined pool 7"), std::string::npos) << r.error;
  EXPECT_EQ(r.chunks, 2u);
  EXPECT_EQ(r.events, 300u);
}

TEST_F(ParallelRead, VisitorStoppingEarlySeesTheSame) {
  write_trace(path, 4);
  for (std::size_t n : {0, 1, 5, 599, 600, 1201, 2500, 100000}) {
    ReadResult r = read_both(path, "stop after " + std::to_string(n), n);
    EXPECT_TRUE(r.ok);
  }
}

}  // namespace
}  // namespace memtrail
