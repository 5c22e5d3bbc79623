// Frames are interned: sites sharing ips share one Frame per ip (frame.hpp),
// in analyze() and in the Session's ranged analyses. Memory per distinct
// stack must not grow by a Frame copy per frame (issue 16: 908 MiB at 10^5
// stacks when every site owned its frames).
#include <gtest/gtest.h>

#include "memtrail/analysis.hpp"
#include "memtrail/session.hpp"
#include "session_test_util.hpp"
#include "trace_builder.hpp"

namespace memtrail {
namespace {

using test::temp_trace;
using test::TraceBuilder;

constexpr int kLevels = 10;  // 2^10 leaf stacks over 2 * 10 distinct ips

std::uint64_t ip_of(int level, int bit) {
  return 0x400000 + static_cast<std::uint64_t>(level) * 0x100 + static_cast<std::uint64_t>(bit);
}

// A full binary trie of stack nodes: level L of a leaf's stack is ip_of(L,
// bit L of the leaf number). One 64-byte allocation from every leaf.
void write_trie(TraceBuilder& b) {
  b.pool(1, "malloc", PoolKind::heap);
  std::uint32_t next = 1;
  std::vector<std::uint32_t> level{0};
  for (int l = 0; l < kLevels; ++l) {
    std::vector<std::uint32_t> below;
    for (std::uint32_t parent : level)
      for (int bit = 0; bit < 2; ++bit) {
        b.stack(next, parent, ip_of(l, bit));
        below.push_back(next++);
      }
    level = below;
  }
  std::uint64_t t = 10;
  for (std::uint32_t leaf : level) {
    // One statement per step: arguments are evaluated in no fixed order.
    const std::uint64_t now = t++;
    b.alloc(now, 1, 0x10000 + now * 64, 64, leaf);
  }
}

// Every site's frames index `table`, and each is the very Frame object of
// the table, not a copy.
void expect_interned(const Analysis& a, const FrameTable* table) {
  ASSERT_NE(table, nullptr);
  for (const Site& s : a.sites) {
    ASSERT_EQ(s.frames.size(), static_cast<std::size_t>(kLevels));
    EXPECT_EQ(s.frames.table(), table);
    for (std::size_t k = 0; k < s.frames.size(); ++k) {
      const Frame* f = &s.frames[k];
      EXPECT_GE(f, table->frames.data());
      EXPECT_LT(f, table->frames.data() + table->frames.size());
    }
  }
}

TEST(FrameTable, SitesShareOneFramePerDistinctIp) {
  TraceBuilder b(temp_trace("frametable.mtr"));
  write_trie(b);
  AnalysisOptions o;
  o.symbol_cache = false;
  Analysis a = analyze(b.finish(), o);
  ASSERT_TRUE(a.error.empty()) << a.error;
  ASSERT_EQ(a.sites.size(), std::size_t{1} << kLevels);
  // 1024 sites × 10 frames, but only 20 distinct ips: 20 Frames in all.
  EXPECT_EQ(a.frame_table->frames.size(), static_cast<std::size_t>(2 * kLevels));
  EXPECT_EQ(a.frame_table->by_ip.size(), static_cast<std::size_t>(2 * kLevels));
  expect_interned(a, a.frame_table.get());
  // Innermost first: frame 0 is the leaf's ip, the last the root's.
  for (const Site& s : a.sites) {
    std::vector<std::uint64_t> ips = a.stack_ips(s.stack);
    ASSERT_EQ(ips.size(), s.frames.size());
    for (std::size_t k = 0; k < ips.size(); ++k) EXPECT_EQ(s.frames[k].address, ips[k]);
    EXPECT_EQ(s.frames.back().address & ~std::uint64_t{1}, ip_of(0, 0));
  }
}

TEST(FrameTable, RangedAnalysisSharesTheSessionsFrames) {
  TraceBuilder b(temp_trace("frametable-range.mtr"));
  write_trie(b);
  auto s = test::open_session(b.finish());
  ASSERT_TRUE(s);
  const Analysis& whole = s->whole();
  expect_interned(whole, whole.frame_table.get());
  auto range = s->analyze_range(0, 500);
  ASSERT_TRUE(range->error.empty()) << range->error;
  ASSERT_EQ(range->sites.size(), whole.sites.size());
  expect_interned(*range, whole.frame_table.get());
  // Session::frames still answers a full copy for callers that keep one.
  const std::vector<Frame> copy = s->frames(whole.sites[0].stack);
  ASSERT_EQ(copy.size(), whole.sites[0].frames.size());
  EXPECT_EQ(copy.front().address, whole.sites[0].frames.front().address);
}

TEST(FrameList, BehavesLikeTheVectorItReplaces) {
  Frame a, b, c;
  a.function = "a";
  b.function = "b";
  c.function = "c";
  FrameList l{a, b, c};
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l.front().function, "a");
  EXPECT_EQ(l.back().function, "c");
  EXPECT_EQ(l.end() - l.begin(), 3);
  std::string reversed;
  for (auto it = l.rbegin(); it != l.rend(); ++it) reversed += it->function;
  EXPECT_EQ(reversed, "cba");
  EXPECT_EQ(l.to_vector().at(1).function, "b");
  EXPECT_TRUE(FrameList().empty());
  EXPECT_EQ(FrameList().begin(), FrameList().end());
}

}  // namespace
}  // namespace memtrail
