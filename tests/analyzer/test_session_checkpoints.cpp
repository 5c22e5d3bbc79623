// The session's checkpoints: a segment map at any moment equals a replay
// from the start (segment_map_at), within any budget, and really starts at
// a checkpoint (bytes before it are not read again).
#include <fcntl.h>
#include <sys/stat.h>

#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "session_test_util.hpp"

namespace memtrail {
namespace {

using test::TraceBuilder;

// Pool 2 with 4 segments of 4 KiB, then 600 allocs/frees of 256-byte blocks
// cycling through 32 slots, 20 events a chunk (30 chunks).
void write_churn(TraceBuilder& b) {
  b.pool(2, "cache", PoolKind::caching);
  b.stack(1, 0, 0x1000);
  for (std::uint64_t s = 0; s < 4; ++s)
    b.segment(1 + s, EventKind::segment_reserve, 2, 0x100000 + s * 0x1000, 0x1000);
  b.writer().flush();
  bool live[32] = {};
  for (std::uint64_t i = 0; i < 600; ++i) {
    std::uint64_t slot = (i * 7) % 32, t = 10 + i * 10;
    std::uint64_t addr = 0x100000 + slot * 0x200;
    if (live[slot])
      b.free(t, 2, addr);
    else
      b.alloc(t, 2, addr, 256, 1);
    live[slot] = !live[slot];
    if (i % 20 == 19) b.writer().flush();
  }
}

std::uint64_t used_in(const SegmentMap& m) {
  std::uint64_t n = 0;
  for (const SegmentInfo& s : m.segments)
    for (const BlockInfo& b : s.blocks) n += b.size;
  return n;
}

TEST(SessionCheckpoints, AnyMomentEqualsAReplayFromTheStartWithinAnyBudget) {
  TraceBuilder b(test::temp_trace("c-churn.mtr"));
  write_churn(b);
  const std::string& path = b.finish();
  for (std::size_t budget : {std::size_t{32} << 20, std::size_t{6000}, std::size_t{0}}) {
    SessionOptions o = test::session_options();
    o.checkpoint_budget_bytes = budget;
    auto s = test::open_session(path, o);
    ASSERT_TRUE(s);
    for (std::uint64_t t = 0; t <= 6100; t += 95) {
      SegmentMap a = s->segment_map(PoolId{2}, t), want = segment_map_at(path, PoolId{2}, t);
      ASSERT_TRUE(a.error.empty()) << a.error;
      ASSERT_EQ(a.segments.size(), want.segments.size()) << t;
      EXPECT_EQ(a.pool_state.final_used_bytes, want.pool_state.final_used_bytes) << t;
      EXPECT_EQ(used_in(a), used_in(want)) << "t " << t << " budget " << budget;
      for (std::size_t i = 0; i < a.segments.size(); ++i) {
        ASSERT_EQ(a.segments[i].blocks.size(), want.segments[i].blocks.size()) << t;
        for (std::size_t k = 0; k < a.segments[i].blocks.size(); ++k)
          EXPECT_EQ(a.segments[i].blocks[k].alloc_ns, want.segments[i].blocks[k].alloc_ns);
      }
    }
  }
}

TEST(SessionCheckpoints, ALateMomentReadsFromItsCheckpointOnly) {
  TraceBuilder b(test::temp_trace("c-late.mtr"));
  write_churn(b);
  const std::string& path = b.finish();
  auto s = test::open_session(path);
  ASSERT_TRUE(s);
  SegmentMap before = s->segment_map(PoolId{2}, 6000);
  ASSERT_TRUE(before.error.empty()) << before.error;
  // Flip a byte of an early chunk, keeping size and modification time: a
  // replay from the start now fails; one from a late checkpoint does not.
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(200);
    char c = 0;
    f.read(&c, 1);
    c ^= 0x40;
    f.seekp(200);
    f.write(&c, 1);
  }
  struct timespec times[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  EXPECT_FALSE(segment_map_at(path, PoolId{2}, 6000).error.empty());
  SegmentMap after = s->segment_map(PoolId{2}, 6000);
  EXPECT_TRUE(after.error.empty()) << after.error;
  EXPECT_EQ(used_in(after), used_in(before));
}

}  // namespace
}  // namespace memtrail
