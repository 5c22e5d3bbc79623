// Stack capture: an event recorded from a known call chain carries a stack
// whose innermost frames are that chain's functions, with the recorder's own
// frames skipped; identical stacks share one trie node.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory_resource>

#include "memtrail/alloc/bfc_pool.hpp"
#include "memtrail/alloc/caching_pool.hpp"
#include "memtrail/alloc/host_resources.hpp"
#include "memtrail/recorder.hpp"
#include "trace_collector.hpp"

// Exported (ENABLE_EXPORTS), not inlined and not cloned (Release's -O3 makes
// memtrail_test_inner.constprop, a local symbol), so dladdr names them.
extern "C" __attribute__((noinline, noclone)) void memtrail_test_inner(int n) {
  for (int i = 0; i < n; ++i)
    memtrail::record_alloc(1, reinterpret_cast<void*>(0x1000 + i), 16, 16);
  asm volatile("" ::: "memory");
}
extern "C" __attribute__((noinline, noclone)) void memtrail_test_middle(int n) {
  memtrail_test_inner(n);
  asm volatile("" ::: "memory");
}
extern "C" __attribute__((noinline, noclone)) void memtrail_test_outer(int n) {
  memtrail_test_middle(n);
  asm volatile("" ::: "memory");
}
extern "C" __attribute__((noinline, noclone)) void memtrail_test_skipping(void) {
  memtrail::record(memtrail::Event{.kind = memtrail::EventKind::mark}, /*skip_frames=*/1);
  asm volatile("" ::: "memory");
}
extern "C" __attribute__((noinline, noclone)) void memtrail_test_skip_caller(void) {
  memtrail_test_skipping();
  asm volatile("" ::: "memory");
}

// An allocator whose record call sits two frames below its entry point. Its
// pool is registered by the test, so the trace is valid on its own.
static std::uint32_t g_test_pool = 0;
extern "C" __attribute__((noinline, noclone)) void memtrail_test_pool_internals(const void* p) {
  memtrail::record_alloc(g_test_pool, p, 32, 32);
  asm volatile("" ::: "memory");
}
extern "C" __attribute__((noinline, noclone)) void memtrail_test_pool_entry(const void* p) {
  MEMTRAIL_ALLOCATOR_ENTRY();
  memtrail_test_pool_internals(p);
  asm volatile("" ::: "memory");
}
extern "C" __attribute__((noinline, noclone)) void memtrail_test_pool_user(void) {
  memtrail_test_pool_entry(reinterpret_cast<const void*>(0x5000));
  asm volatile("" ::: "memory");
}

// Users of the real pools: through std::pmr (inline allocate -> virtual
// do_allocate) and through the pools' own calls.
extern "C" __attribute__((noinline, noclone)) void* memtrail_test_pmr_allocate(
    std::pmr::memory_resource* r) {
  void* p = r->allocate(1000);
  asm volatile("" ::: "memory");
  return p;
}
extern "C" __attribute__((noinline, noclone)) void memtrail_test_pmr_deallocate(
    std::pmr::memory_resource* r, void* p) {
  r->deallocate(p, 1000);
  asm volatile("" ::: "memory");
}
extern "C" __attribute__((noinline, noclone)) void* memtrail_test_caching_malloc(
    memtrail::alloc::CachingPool* pool) {
  void* p = pool->malloc(3000, 0);
  asm volatile("" ::: "memory");
  return p;
}
extern "C" __attribute__((noinline, noclone)) void memtrail_test_caching_free(
    memtrail::alloc::CachingPool* pool, void* p) {
  pool->free(p);
  asm volatile("" ::: "memory");
}

namespace memtrail {
namespace {

std::string symbol_of(std::uint64_t ip) {
  Dl_info info;
  // ip is a return address; ip - 1 lies inside the calling instruction.
  if (dladdr(reinterpret_cast<void*>(ip - 1), &info) && info.dli_sname) return info.dli_sname;
  return "?";
}

std::string module_of(std::uint64_t ip) {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(ip - 1), &info) && info.dli_fname) return info.dli_fname;
  return "?";
}

TEST(Stacks, KnownCallChainIsCapturedAndRecorderFramesAreSkipped) {
  std::string path = test::temp_path("stacks.mtr");
  RecorderOptions o;
  o.output = path;
  o.stack_depth = 10;
  o.sample_interval_ms = 0;
  ASSERT_TRUE(start(o));
  register_pool({0, 0, "p", PoolKind::other, MemorySpace::host, -1});
  memtrail_test_outer(3);
  stop();

  test::Collected c;
  ReadResult r = test::read_trace(path, c);
  std::remove(path.c_str());
  ASSERT_TRUE(r.ok) << r.error;
  std::map<std::uint32_t, StackNode> nodes;
  for (auto& n : c.stack_nodes) nodes[n.id] = n;
  std::vector<const Event*> allocs;
  for (auto& e : c.events)
    if (e.kind == EventKind::alloc) allocs.push_back(&e);
  ASSERT_EQ(allocs.size(), 3u);
  // The same call site: one leaf shared by all three events.
  EXPECT_NE(allocs[0]->stack, 0u);
  EXPECT_EQ(allocs[0]->stack, allocs[1]->stack);
  EXPECT_EQ(allocs[1]->stack, allocs[2]->stack);

  std::vector<std::uint64_t> frames;
  for (std::uint32_t id = allocs[0]->stack; id != 0; id = nodes.at(id).parent)
    frames.push_back(nodes.at(id).ip);
  ASSERT_GE(frames.size(), 4u);
  EXPECT_LE(frames.size(), 10u);  // stack_depth
  EXPECT_EQ(symbol_of(frames[0]), "memtrail_test_inner");
  EXPECT_EQ(symbol_of(frames[1]), "memtrail_test_middle");
  EXPECT_EQ(symbol_of(frames[2]), "memtrail_test_outer");
  for (std::uint64_t ip : frames)
    EXPECT_EQ(module_of(ip).find("libmemtrail"), std::string::npos) << symbol_of(ip);
}

// Records a trace of `body`, returns "kind innermost-symbol" for every event
// that has a stack.
template <typename Body>
std::vector<std::string> innermost_symbols(const char* name, Body body) {
  std::string path = test::temp_path(name);
  RecorderOptions o;
  o.output = path;
  o.sample_interval_ms = 0;
  EXPECT_TRUE(start(o));
  body();
  stop();
  test::Collected c;
  ReadResult r = test::read_trace(path, c);
  std::remove(path.c_str());
  EXPECT_TRUE(r.ok) << r.error;
  std::map<std::uint32_t, StackNode> nodes;
  for (auto& n : c.stack_nodes) nodes[n.id] = n;
  std::vector<std::string> out;
  for (auto& e : c.events)
    if (e.stack != 0)
      out.push_back(std::string(to_string(e.kind)) + " " + symbol_of(nodes.at(e.stack).ip));
  return out;
}

TEST(Stacks, SkipFramesDropsCallerFrames) {
  // memtrail_test_skipping itself is skipped: the innermost frame is its caller.
  auto got = innermost_symbols("stacks-skip.mtr", [] { memtrail_test_skip_caller(); });
  EXPECT_EQ(got, std::vector<std::string>{"mark memtrail_test_skip_caller"});
}

TEST(Stacks, AllocatorEntryMakesItsCallerTheInnermostFrame) {
  auto got = innermost_symbols("stacks-entry.mtr", [] {
    g_test_pool = register_pool({0, 0, "entry", PoolKind::other, MemorySpace::host, -1});
    memtrail_test_pool_user();
  });
  EXPECT_EQ(got, std::vector<std::string>{"alloc memtrail_test_pool_user"});
}

TEST(Stacks, PoolEventsStartAtThePoolsCaller) {
  alloc::SystemHeapResource heap;
  alloc::CachingPool caching(heap, alloc::CachingConfig{}, "caching");
  alloc::BfcPool bfc(heap, alloc::BfcOptions{}, "bfc");
  auto got = innermost_symbols("stacks-pools.mtr", [&] {
    void* a = memtrail_test_pmr_allocate(&caching);
    memtrail_test_pmr_deallocate(&caching, a);
    void* b = memtrail_test_caching_malloc(&caching);
    memtrail_test_caching_free(&caching, b);
    void* c = memtrail_test_pmr_allocate(&bfc);
    memtrail_test_pmr_deallocate(&bfc, c);
  });
  // Segment reservations made on the way count as the caller's too.
  for (const std::string& event : got) {
    EXPECT_TRUE(event.ends_with(" memtrail_test_pmr_allocate") ||
                event.ends_with(" memtrail_test_pmr_deallocate") ||
                event.ends_with(" memtrail_test_caching_malloc") ||
                event.ends_with(" memtrail_test_caching_free"))
        << event;
  }
  auto count = [&](const std::string& e) { return std::count(got.begin(), got.end(), e); };
  EXPECT_EQ(count("alloc memtrail_test_pmr_allocate"), 2);
  EXPECT_EQ(count("free memtrail_test_pmr_deallocate"), 2);
  EXPECT_EQ(
      count("alloc memtrail_test_caching_malloc") + count("reuse memtrail_test_caching_malloc"), 1);
  EXPECT_EQ(count("free memtrail_test_caching_free"), 1);
}

}  // namespace
}  // namespace memtrail
