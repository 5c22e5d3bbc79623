// Workspace: ND4J's learning, overallocation, spill, circular and
// REALLOCATE rules with exact sizes; MMAP file lifecycle; limits; events.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <map>

#include "memtrail/alloc/host_resources.hpp"
#include "memtrail/alloc/limits.hpp"
#include "memtrail/alloc/workspace.hpp"
#include "memtrail/recorder.hpp"
#include "memtrail/trace_file.hpp"
#include "pool_recording.hpp"
#include "test_util.hpp"

namespace {

using namespace memtrail::alloc;

WorkspaceConfiguration conf(const std::string& text) {
  return WorkspaceConfiguration::parse(text);
}

// One cycle: enter, the allocations, close. Returns the pointers.
std::vector<void*> cycle(Workspace& ws, std::initializer_list<std::size_t> sizes) {
  std::vector<void*> out;
  ws.enter();
  for (auto s : sizes) out.push_back(ws.alloc(s));
  ws.close();
  return out;
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

TEST(Workspace, FirstLoopLearnsWithOverallocation) {
  SystemHeapResource heap;
  Workspace ws(heap, {}, "LOOP");
  ws.enter();
  ws.alloc(100);   // 112 after 16-byte rounding
  ws.alloc(1000);  // 1008
  EXPECT_EQ(ws.stats().spilled_bytes, 1120u);
  EXPECT_EQ(ws.stats().external_this_cycle, 2u);
  ws.close();
  // 1120 + (long)(1120 * 0.3) = 1456
  EXPECT_EQ(ws.stats().learned_size, 1456u);
  EXPECT_EQ(ws.stats().current_size, 1456u);
  EXPECT_EQ(ws.stats().initial_block_size, 1120u);
  EXPECT_EQ(ws.stats().spilled_bytes, 0u);
  EXPECT_EQ(heap.bytes_in_use(), 1456u);
  cycle(ws, {100, 1000});
  EXPECT_EQ(ws.stats().external_last_cycle, 0u);
  EXPECT_EQ(ws.stats().last_cycle_bytes, 1120u);
  EXPECT_EQ(ws.stats().cycles, 2u);
  EXPECT_EQ(heap.bytes_in_use(), 1456u);
}

TEST(Workspace, StrictLearnsExactlyAndNoneNeverLearns) {
  SystemHeapResource heap;
  Workspace strict(heap, conf("policyAllocation:STRICT"), "S");
  cycle(strict, {100, 1000});
  EXPECT_EQ(strict.stats().learned_size, 1120u);
  Workspace none(heap, conf("policyLearning:NONE"), "N");
  for (int i = 0; i < 3; ++i) cycle(none, {100});
  EXPECT_EQ(none.stats().learned_size, 0u);
  EXPECT_EQ(none.stats().current_size, 0u);
  EXPECT_EQ(none.stats().external_total, 3u);
}

TEST(Workspace, OverTimeLearnsAtCyclesBeforeInitialization) {
  SystemHeapResource heap;
  Workspace ws(heap,
               conf("policyLearning:OVER_TIME,cyclesBeforeInitialization:3,"
                    "policyAllocation:STRICT"),
               "OT");
  cycle(ws, {100});  // 112
  cycle(ws, {300});  // 304
  EXPECT_EQ(ws.stats().learned_size, 0u);
  cycle(ws, {200});  // 208; learns the largest cycle
  EXPECT_EQ(ws.stats().learned_size, 304u);
  // With the default 0 it never fires (ND4J compares for equality).
  Workspace never(heap, conf("policyLearning:OVER_TIME"), "OT0");
  for (int i = 0; i < 4; ++i) cycle(never, {100});
  EXPECT_EQ(never.stats().learned_size, 0u);
}

TEST(Workspace, SpillPolicies) {
  SystemHeapResource heap;
  const std::string fixed = "initialSize:1024,policyAllocation:STRICT,policyLearning:NONE";
  Workspace external(heap, conf(fixed), "E");
  external.enter();
  external.alloc(1000);  // 1008 fits
  external.alloc(100);   // 112 spills
  EXPECT_EQ(external.stats().spilled_bytes, 112u);
  EXPECT_EQ(external.stats().external_this_cycle, 1u);
  external.close();

  Workspace fail(heap, conf(fixed + ",policySpill:FAIL"), "F");
  fail.enter();
  fail.alloc(1000);
  try {
    fail.alloc(100);
    ADD_FAILURE() << "no throw";
  } catch (const OutOfMemoryError& e) {
    EXPECT_EQ(std::string(e.what()),
              "memtrail: workspace [F]: Can't allocate memory: Workspace is full (request 112 "
              "bytes, buffer 1024, offset 1008, policySpill FAIL)");
  }
  fail.close();
  // FAIL while still learning throws on the first allocation, as in ND4J.
  Workspace learning(heap, conf("policySpill:FAIL"), "FL");
  learning.enter();
  EXPECT_THROW(learning.alloc(16), OutOfMemoryError);
  learning.close();
}

TEST(Workspace, ReallocateGrowsAScopedWorkspace) {
  SystemHeapResource heap;
  Workspace ws(heap, conf("policySpill:REALLOCATE,policyAllocation:STRICT"), "R");
  cycle(ws, {1000});
  EXPECT_EQ(ws.stats().current_size, 1008u);
  cycle(ws, {1000, 500});  // 1008 + 512: the second spills, then the buffer grows
  EXPECT_EQ(ws.stats().current_size, 1520u);
  EXPECT_EQ(heap.bytes_in_use(), 1520u);
  cycle(ws, {1000, 500});
  EXPECT_EQ(ws.stats().external_last_cycle, 0u);
  // EXTERNAL keeps spilling instead.
  Workspace ext(heap, conf("policyAllocation:STRICT"), "X");
  cycle(ext, {1000});
  cycle(ext, {1000, 500});
  cycle(ext, {1000, 500});
  EXPECT_EQ(ext.stats().current_size, 1008u);
  EXPECT_EQ(ext.stats().external_last_cycle, 1u);
}

TEST(Workspace, CircularReusesBlocksAndWraps) {
  SystemHeapResource heap;
  Workspace ws(heap, conf("policyReset:ENDOFBUFFER_REACHED,overallocationLimit:1"), "C");
  cycle(ws, {100});  // 112 spilled; learns (long)(112*1.3)=145 -> 152, doubled: 304
  EXPECT_EQ(ws.stats().initial_block_size, 152u);
  EXPECT_EQ(ws.stats().current_size, 304u);
  // ND4J pads each cycle to the block boundary (offset 40 here); offsets
  // then round up to the 16-byte alignment of C++ allocations: 48.
  auto c2 = cycle(ws, {100});  // 48..160, padded to 192
  auto c3 = cycle(ws, {100});  // 192..304, padded to 344
  auto c4 = cycle(ws, {100});  // does not fit: wraps to 0
  EXPECT_EQ(static_cast<char*>(c3[0]) - static_cast<char*>(c2[0]), 144);
  EXPECT_EQ(static_cast<char*>(c2[0]) - static_cast<char*>(c4[0]), 48);
  EXPECT_EQ(ws.stats().external_total, 1u);  // only the learning cycle spilled
}

TEST(Workspace, MmapFileIsRemovedOnCloseAndOnException) {
  memtrail::test::TempDir dir;
  const auto c =
      conf("initialSize:1M,policyLocation:MMAP,policyLearning:NONE,tempFilePath:" + dir.path);
  std::string path;
  {
    SystemHeapResource heap;
    Workspace ws(heap, c, "M");
    path = ws.mmap_path();
    ASSERT_EQ(path.rfind(dir.path + "/memtrail-ws-M-", 0), 0u);
    EXPECT_TRUE(exists(path));
    EXPECT_EQ(ws.stats().current_size, 1u << 20);  // MMAP is never overallocated
    EXPECT_EQ(heap.bytes_in_use(), 0u);
    auto* p = static_cast<char*>(cycle(ws, {4096})[0]);
    p[0] = 1;
  }
  EXPECT_FALSE(exists(path));
  try {
    SystemHeapResource heap;
    Workspace ws(heap, c, "M2");
    path = ws.mmap_path();
    ws.enter();
    throw std::runtime_error("boom");
  } catch (const std::runtime_error&) {
  }
  EXPECT_FALSE(path.empty());
  EXPECT_FALSE(exists(path));
}

TEST(Workspace, LimitsGiveWhichLimitRequestAndInUse) {
  auto& limits = ProcessLimits::instance();
  const LimitConfig saved = limits.config();
  SystemHeapResource heap;
  limits.configure({limits.charged_bytes() + 1000, 0});
  try {
    Workspace ws(heap, conf("initialSize:4096,policyAllocation:STRICT"), "BIG");
    ADD_FAILURE() << "no throw";
  } catch (const LimitError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.which(), LimitError::Which::process_max_bytes);
    EXPECT_EQ(e.requested(), 4096u);
    EXPECT_EQ(what.rfind("memtrail: workspace [BIG]: Can't allocate [HOST] memory for its buffer "
                         "of 4096 bytes: memtrail: MEMTRAIL_MAX_BYTES exceeded by 'system heap': "
                         "in use ",
                         0),
              0u)
        << what;
  }
  // An MMAP workspace is not RAM: it may be larger than the RAM limit.
  memtrail::test::TempDir dir;
  Workspace mm(
      heap,
      conf("initialSize:64K,policyLocation:MMAP,policyLearning:NONE,tempFilePath:" + dir.path),
      "MM");
  EXPECT_EQ(mm.stats().current_size, 64u << 10);
  // A spill over a per-resource limit names that limit.
  heap.set_max_bytes(100);
  Workspace small(heap, conf("policyLearning:NONE"), "SP");
  small.enter();
  try {
    small.alloc(200);
    ADD_FAILURE() << "no throw";
  } catch (const LimitError& e) {
    EXPECT_EQ(e.which(), LimitError::Which::resource_max_bytes);
    EXPECT_EQ(std::string(e.what()),
              "memtrail: workspace [SP]: Can't allocate [HOST] memory for its spill of 208 bytes: "
              "memtrail: max_bytes of 'system heap' exceeded: in use 0 B + request 208 B > limit "
              "100 B");
  }
  small.close();
  limits.configure(saved);
}

TEST(Workspace, HostOnlyMirroringKeepsTheBufferOnTheHost) {
  SystemHeapResource heap;  // stands in for a device upstream's host side
  Workspace ws(heap, conf("initialSize:1024,policyAllocation:STRICT,policyMirroring:HOST_ONLY"),
               "H");
  EXPECT_EQ(ws.stats().current_size, 1024u);
  EXPECT_EQ(heap.bytes_in_use(), 0u);  // the buffer came from the workspace's own host heap
  EXPECT_EQ(ws.stats().mirror_bytes, 0u);
}

struct Collect final : memtrail::TraceVisitor {
  std::vector<memtrail::Event> events;
  void on_event(const memtrail::Event& e) override { events.push_back(e); }
  int count(std::uint32_t pool, memtrail::EventKind kind) const {
    int n = 0;
    for (const auto& e : events) n += e.pool == pool && e.kind == kind;
    return n;
  }
};

TEST(Workspace, TracesCyclesLearningSpillsAndReuse) {
  memtrail::test::TempDir dir;
  const std::string path = dir.path + "/ws.mtr";
  ASSERT_TRUE(memtrail::test::start_pool_recording(path));
  SystemHeapResource heap;
  std::uint32_t pool = 0;
  {
    Workspace ws(heap, {}, "TRACED");
    pool = ws.pool_id();
    for (int i = 0; i < 3; ++i) cycle(ws, {100, 1000});
  }
  memtrail::stop();
  memtrail::TraceReader reader(path);
  Collect got;
  auto result = reader.read(got);
  ASSERT_TRUE(result.ok) << result.error;
  using K = memtrail::EventKind;
  EXPECT_EQ(got.count(pool, K::scope_begin), 3);
  EXPECT_EQ(got.count(pool, K::scope_end), 3);
  EXPECT_EQ(got.count(pool, K::alloc), 2);  // the learning cycle's spills
  EXPECT_EQ(got.count(pool, K::spill), 2);
  EXPECT_EQ(got.count(pool, K::workspace_learn), 1);
  EXPECT_EQ(got.count(pool, K::reuse), 4);
  EXPECT_EQ(got.count(pool, K::free), 6);
  EXPECT_EQ(got.count(pool, K::workspace_reset), 2);
  for (const auto& e : got.events) {
    if (e.pool == pool && e.kind == K::workspace_learn) {
      EXPECT_EQ(e.size, 1456u);
    }
  }
}

}  // namespace
