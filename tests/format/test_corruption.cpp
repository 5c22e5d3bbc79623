// Bad input never crashes the reader: cut files read up to their last whole
// chunk and say what they dropped; flipped bytes, bad magic, other versions and
// dangling table references give one-line errors naming the problem.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>

#include "memtrail/size.hpp"
#include "memtrail/trace_file.hpp"
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

// A small trace of three data chunks plus the end marker. Returns the end
// offset of every chunk (header end first).
std::vector<std::size_t> write_small_trace(const std::string& path) {
  std::vector<std::size_t> ends;
  TraceHeader h;
  h.pid = 1;
  h.command_line = "small";
  TraceWriter w(path, h);
  ends.push_back(w.bytes_written());
  w.add_thread({1, 11, "main"});
  w.add_pool({1, 0, "malloc", PoolKind::heap, MemorySpace::host, -1});
  for (int c = 0; c < 3; ++c) {
    for (int i = 0; i < 20; ++i) {
      w.add_event(
          {std::uint64_t(c * 100 + i), 1, 1, 0, EventKind::alloc, 1, 0x1000u + 64u * i, 64, 64, 0});
      if (i % 2)
        w.add_event(
            {std::uint64_t(c * 100 + i), 1, 1, 0, EventKind::free, 9, 0x1000u + 64u * i, 0, 0, 0});
    }
    w.flush();
    ends.push_back(w.bytes_written());
  }
  w.finish();
  ends.push_back(w.bytes_written());
  return ends;
}

struct Corruption : ::testing::Test {
  test::TempFile path_file{"corrupt.mtr"}, cut_path_file{"corrupt-cut.mtr"};
  const std::string& path = path_file.path;
  const std::string& cut_path = cut_path_file.path;
};

TEST_F(Corruption, CutAtEveryOffsetReadsUpToTheLastWholeChunk) {
  std::vector<std::size_t> ends = write_small_trace(path);
  std::string full = slurp(path);
  ASSERT_EQ(full.size(), ends.back());
  constexpr std::uint64_t kEventsPerChunk = 30;
  for (std::size_t cut = 0; cut < full.size(); ++cut) {
    spit(cut_path, std::string_view(full).substr(0, cut));
    Collected c;
    ReadResult r = test::read_trace(cut_path, c);
    if (cut < ends[0]) {
      // Header incomplete: an error, never a crash.
      EXPECT_FALSE(r.ok) << "cut " << cut;
      EXPECT_FALSE(r.error.empty());
      EXPECT_EQ(r.error.find('\n'), std::string::npos);
      continue;
    }
    ASSERT_TRUE(r.ok) << "cut " << cut << ": " << r.error;
    EXPECT_FALSE(r.complete) << "cut " << cut;
    std::size_t whole = 0;  // whole data chunks before the cut
    while (whole + 1 < ends.size() - 1 && ends[whole + 1] <= cut) ++whole;
    std::size_t last_end = ends[whole];
    EXPECT_EQ(r.chunks, whole) << "cut " << cut;
    EXPECT_EQ(r.events, whole * kEventsPerChunk) << "cut " << cut;
    EXPECT_EQ(c.events.size(), r.events);
    EXPECT_EQ(r.dropped_bytes, cut - last_end) << "cut " << cut;
    if (cut > last_end)
      EXPECT_NE(r.warning.find("dropped " + count_text(cut - last_end, "byte") +
                               " after the last whole chunk"),
                std::string::npos)
          << r.warning;
    else
      EXPECT_TRUE(r.warning.empty()) << r.warning;
  }
  Collected c;
  ReadResult r = test::read_trace(path, c);
  ASSERT_TRUE(r.ok);
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.events, 3 * kEventsPerChunk);
}

// The quick end check (`memtrail run`'s final line) agrees with a full read:
// only the finished file ends with the end marker; any cut, or a flipped
// byte in the end frame, does not.
TEST_F(Corruption, EndMarkerCheckHoldsOnlyForTheFinishedFile) {
  std::vector<std::size_t> ends = write_small_trace(path);
  EXPECT_TRUE(TraceReader(path).ends_with_end_marker());
  std::string full = slurp(path);
  for (std::size_t cut = ends[0]; cut < full.size(); ++cut) {
    spit(cut_path, std::string_view(full).substr(0, cut));
    EXPECT_FALSE(TraceReader(cut_path).ends_with_end_marker()) << "cut " << cut;
  }
  for (std::size_t at = full.size() - 21; at < full.size(); ++at) {
    std::string flipped = full;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x40);
    spit(cut_path, flipped);
    EXPECT_FALSE(TraceReader(cut_path).ends_with_end_marker()) << "flipped byte " << at;
  }
}

TEST_F(Corruption, FlippedByteInAChunkIsAChecksumErrorNamingItsOffset) {
  std::vector<std::size_t> ends = write_small_trace(path);
  std::string full = slurp(path);
  for (std::size_t pos = ends[0]; pos < full.size(); ++pos) {
    std::string bad = full;
    bad[pos] ^= 0x5a;
    spit(cut_path, bad);
    Collected c;
    ReadResult r = test::read_trace(cut_path, c);
    std::size_t chunk = 0;
    while (ends[chunk + 1] <= pos) ++chunk;
    ASSERT_FALSE(r.ok) << "flip at " << pos;
    EXPECT_NE(r.error.find("checksum mismatch in chunk at byte " + std::to_string(ends[chunk])),
              std::string::npos)
        << "flip at " << pos << ": " << r.error;
    EXPECT_EQ(r.chunks, chunk);
  }
}

TEST_F(Corruption, FlippedHeaderByteIsReported) {
  std::vector<std::size_t> ends = write_small_trace(path);
  std::string full = slurp(path);
  for (std::size_t pos = 0; pos < ends[0]; ++pos) {
    std::string bad = full;
    bad[pos] ^= 0x01;
    spit(cut_path, bad);
    TraceReader reader(cut_path);
    EXPECT_FALSE(reader.header_error().empty()) << "flip at " << pos;
    Collected c;
    ReadResult r = reader.read(c);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.error, reader.header_error());
    EXPECT_EQ(r.events, 0u);
  }
}

TEST_F(Corruption, NotATraceHasBadMagic) {
  spit(path, "hello world, this is not a trace at all");
  Collected c;
  ReadResult r = test::read_trace(path, c);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, path + ": not a memtrail trace (bad magic)");
  spit(path, "");
  r = test::read_trace(path, c);
  EXPECT_EQ(r.error, path + ": not a memtrail trace (bad magic)");
}

TEST_F(Corruption, OtherVersionIsUnsupported) {
  write_small_trace(path);
  std::string full = slurp(path);
  full[8] = 7;  // version u16 at byte 8
  spit(path, full);
  TraceReader reader(path);
  EXPECT_EQ(reader.header_error(), path + ": unsupported version 7 (this build reads version 1)");
}

TEST_F(Corruption, MissingFileIsAnError) {
  TraceReader reader("/nonexistent/none.mtr");
  EXPECT_NE(reader.header_error().find("/nonexistent/none.mtr: cannot open"), std::string::npos);
}

TEST_F(Corruption, ReferenceToAnUndefinedTableIdIsAnError) {
  std::size_t chunk_at;
  {
    TraceWriter w(path, TraceHeader{});
    chunk_at = w.bytes_written();
    w.add_thread({1, 1, "main"});
    w.add_event({0, 1, /*pool=*/9, 0, EventKind::alloc, 0, 0x10, 8, 8, 0});
  }
  Collected c;
  ReadResult r = test::read_trace(path, c);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error,
            path + ": reference to undefined pool 9 in chunk at byte " + std::to_string(chunk_at));

  {
    TraceWriter w(path, TraceHeader{});
    w.add_stack_node({2, /*parent=*/1, 0x400});
  }
  r = test::read_trace(path, c);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("reference to undefined stack node 1"), std::string::npos) << r.error;

  {
    TraceWriter w(path, TraceHeader{});
    w.add_event({0, 0, 0, 0, EventKind::mark, 0, 0, 0, 0, /*string id=*/3});
  }
  r = test::read_trace(path, c);
  EXPECT_NE(r.error.find("reference to undefined string 3"), std::string::npos) << r.error;
}

TEST_F(Corruption, TrailingGarbageAfterTheEndMarkerIsAWarning) {
  write_small_trace(path);
  std::string full = slurp(path) + "junk";
  spit(path, full);
  Collected c;
  ReadResult r = test::read_trace(path, c);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.warning, path + ": ignored 4 bytes after the end-of-trace marker");
}

}  // namespace
}  // namespace memtrail
