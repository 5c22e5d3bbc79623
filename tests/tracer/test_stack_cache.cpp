// The validated stack cache (tracer/src/stack_cache.hpp) must record exactly
// the frames a fresh unwind would. Every recording site here first takes its
// own unw_backtrace (the oracle) and then records one event whose address
// names the site's entry in a table; the test then checks, event by event,
// that the recorded stack is the oracle's chain (same callers, innermost
// frame in the leaf), with the cache on and with it off
// (RecorderOptions::stack_cache, MEMTRAIL_STACK_CACHE=0), and that the cached
// runs were served from the cache as often as its learning policy allows (a
// chain is learnt at its second sighting, within a walk budget; see
// kWalkCost).
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <libunwind.h>
#include <signal.h>
#include <sys/time.h>
#include <ucontext.h>

#include <alloca.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "memtrail/detail/reentrancy.hpp"
#include "memtrail/detail/test_counters.hpp"
#include "memtrail/recorder.hpp"
#include "trace_collector.hpp"

namespace {

constexpr int kDepth = 64;  // recorded frames (stack_depth)
constexpr int kOracleFrames = 128;
constexpr std::size_t kMaxSites = 1 << 16;
constexpr std::uintptr_t kAddressBase = 0x10000000;

// One oracle chain per recorded event, filled before the event is recorded;
// index = event address - kAddressBase. Fixed storage: a signal handler
// fills entries too.
struct Oracle {
  int n = 0;
  void* ips[kOracleFrames];
};
Oracle g_oracle[kMaxSites];
std::atomic<std::size_t> g_next_site{0};
std::uint32_t g_pool = 0;

// Takes the oracle, then records. The caller's frames (from ips[1]) are what
// the event's stack must hold after its innermost frame, which lies in this
// function (the return address of the record call).
extern "C" __attribute__((noinline)) void memtrail_cache_leaf(int tag) {
  std::size_t site = g_next_site.fetch_add(1);
  if (site >= kMaxSites) return;
  Oracle& o = g_oracle[site];
  // The timer's handler must not unwind while this thread is inside libunwind.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  o.n = unw_backtrace(o.ips, kOracleFrames);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  memtrail::record_alloc(g_pool, reinterpret_cast<const void*>(kAddressBase + site), 16 + tag, 16);
  asm volatile("" ::: "memory");
}

extern "C" __attribute__((noinline)) void memtrail_cache_recurse(int depth, int tag) {
  if (depth <= 0)
    memtrail_cache_leaf(tag);
  else
    memtrail_cache_recurse(depth - 1, tag);
  asm volatile("" ::: "memory");
}

// Built with frame pointers, as Fedora and Ubuntu now build everything:
// each frame's canonical frame address then follows from its rbp, which a
// cache entry checks too.
extern "C" __attribute__((noinline, optimize("no-omit-frame-pointer"))) void
memtrail_cache_fp_recurse(int depth) {
  if (depth <= 0)
    memtrail_cache_leaf(4);
  else
    memtrail_cache_fp_recurse(depth - 1);
  asm volatile("" ::: "memory");
}

// Two chains with frames of one size, called from one place: the same key
// frame address with different return addresses above it.
extern "C" __attribute__((noinline)) void memtrail_cache_chain_a(int depth) {
  memtrail_cache_recurse(depth, 1);
  asm volatile("" ::: "memory");
}
extern "C" __attribute__((noinline)) void memtrail_cache_chain_b(int depth) {
  memtrail_cache_recurse(depth, 2);
  asm volatile("" ::: "memory");
}
extern "C" __attribute__((noinline)) void memtrail_cache_chain_c(int depth) {
  memtrail_cache_recurse(depth, 3);
  asm volatile("" ::: "memory");
}

// A dynamic frame at the bottom of a recursion: for some (depth, bytes)
// pairs the leaf's frame lands where another pair's did, with the outer
// frames moved, and stale return addresses of the earlier call still lying
// in the alloca'ed area.
extern "C" __attribute__((noinline)) void memtrail_cache_alloca(int depth, int bytes) {
  if (depth <= 0) {
    auto* p = static_cast<volatile char*>(alloca(bytes + 1));
    p[0] = 1;
    memtrail_cache_leaf(4);
    asm volatile("" : : "r"(p) : "memory");
  } else {
    memtrail_cache_alloca(depth - 1, bytes);
  }
  asm volatile("" ::: "memory");
}
// alloca in the middle: frames below it fixed, above it moved.
extern "C" __attribute__((noinline)) void memtrail_cache_alloca_middle(int below, int bytes) {
  auto* p = static_cast<volatile char*>(alloca(bytes + 1));
  p[0] = 1;
  memtrail_cache_recurse(below, 5);
  asm volatile("" : : "r"(p) : "memory");
}
extern "C" __attribute__((noinline)) void memtrail_cache_alloca_outer(int above, int below,
                                                                      int bytes) {
  if (above <= 0)
    memtrail_cache_alloca_middle(below, bytes);
  else
    memtrail_cache_alloca_outer(above - 1, below, bytes);
  asm volatile("" ::: "memory");
}

void on_signal(int) {
  if (memtrail::detail::thread_is_internal()) return;  // interrupted the recorder
  int saved = errno;
  memtrail_cache_leaf(6);
  errno = saved;
}
extern "C" __attribute__((noinline)) void memtrail_cache_raise(int depth) {
  if (depth <= 0) {
    memtrail_cache_leaf(7);
    raise(SIGUSR1);
    memtrail_cache_leaf(7);
  } else {
    memtrail_cache_raise(depth - 1);
  }
  asm volatile("" ::: "memory");
}

std::string symbol_of(std::uint64_t ip) {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(ip - 1), &info) && info.dli_sname) return info.dli_sname;
  return "?";
}

struct Outcome {
  std::size_t checked = 0;  // events compared with their oracle
  memtrail::detail::StackCacheCounts counts;
};

// Runs `body` in a fresh session and checks every recorded event against
// its oracle. `body` returns the cache counters of the threads it ran on.
template <typename Body>
Outcome run_and_check(const char* name, bool cache, Body body) {
  using namespace memtrail;
  Outcome out;
  std::string path = test::temp_path(name);
  g_next_site = 0;
  RecorderOptions o;
  o.output = path;
  o.sample_interval_ms = 0;
  o.stack_depth = kDepth;
  o.stack_cache = cache;
  EXPECT_TRUE(start(o));
  g_pool = register_pool({0, 0, "cache", PoolKind::other, MemorySpace::host, -1});
  out.counts = body();
  stop();
  test::Collected c;
  ReadResult r = test::read_trace(path, c);
  std::remove(path.c_str());
  EXPECT_TRUE(r.ok) << r.error;
  std::map<std::uint32_t, StackNode> nodes;
  for (auto& n : c.stack_nodes) nodes[n.id] = n;
  std::size_t sites = std::min<std::size_t>(g_next_site.load(), kMaxSites);
  int failures = 0;
  for (const Event& e : c.events) {
    if (e.kind != EventKind::alloc) continue;
    std::size_t site = e.address - kAddressBase;
    if (e.address < kAddressBase || site >= sites) {
      ADD_FAILURE() << "unexpected event address " << e.address;
      continue;
    }
    std::vector<std::uint64_t> got;
    for (std::uint32_t id = e.stack; id != 0; id = nodes.at(id).parent)
      got.push_back(nodes.at(id).ip);
    const Oracle& want = g_oracle[site];
    std::vector<std::uint64_t> expect;
    for (int i = 1; i < want.n && static_cast<int>(expect.size()) + 1 < kDepth; ++i)
      expect.push_back(reinterpret_cast<std::uintptr_t>(want.ips[i]));
    bool ok = !got.empty() && symbol_of(got[0]) == "memtrail_cache_leaf" &&
              std::vector<std::uint64_t>(got.begin() + 1, got.end()) == expect;
    if (!ok && ++failures <= 3) {
      std::string text =
          "site " + std::to_string(site) + " (cache " + (cache ? "on" : "off") + ")\n  recorded:";
      for (auto ip : got) text += " " + symbol_of(ip);
      text += "\n  unwound: memtrail_cache_leaf";
      for (auto ip : expect) text += " " + symbol_of(ip);
      ADD_FAILURE() << text;
    }
    ++out.checked;
  }
  EXPECT_EQ(failures, 0) << name << " cache " << (cache ? "on" : "off");
  return out;
}

// Runs `body` with the cache on and off; both must match the oracle. With
// the cache on, at least `min_hit_share` of the events must be hits.
template <typename Body>
void both_modes(const char* name, std::size_t events, double min_hit_share, Body body) {
  Outcome off = run_and_check(name, false, body);
  EXPECT_EQ(off.checked, events);
  EXPECT_EQ(off.counts.hits + off.counts.misses, 0u);  // no cache, no counting
  Outcome on = run_and_check(name, true, body);
  EXPECT_EQ(on.checked, events);
  EXPECT_EQ(on.counts.hits + on.counts.misses, events);
  EXPECT_GE(static_cast<double>(on.counts.hits), min_hit_share * static_cast<double>(events))
      << "hits " << on.counts.hits << " misses " << on.counts.misses;
}

TEST(StackCache, RecursionAtManyDepths) {
  both_modes("cache-recursion.mtr", 8 * 90, 0.45, [] {
    for (int rep = 0; rep < 8; ++rep)
      for (int depth = 0; depth < 90; ++depth) memtrail_cache_recurse(depth, 0);
    return memtrail::detail::stack_cache_counts();
  });
}

TEST(StackCache, FramePointerChainsOfManyFramesAreCached) {
  // An entry once held 16 rbp checks: a chain of more frame-pointer frames
  // was never cached, and each of its events cost an unw_backtrace plus,
  // while hits paid for it, a failed learning walk (a program built with
  // frame pointers ran 5x slower than one without).
  // (Half, not nearly all: a chain whose hash shares a slot of the
  // sent-stack table with another's is never learned.)
  both_modes("cache-frame-pointers.mtr", 6 * 100, 0.5, [] {
    for (int depth : {20, 30, 40, 50, 60, 70})
      for (int i = 0; i < 100; ++i) memtrail_cache_fp_recurse(depth);
    return memtrail::detail::stack_cache_counts();
  });
}

TEST(StackCache, AlternatingChainsSharingOneFrameAddress) {
  // Two chains per key fit the set's two ways (hits); three thrash it
  // (misses, still exact).
  both_modes("cache-alternating.mtr", 3 * (200 * 2 + 100 * 3), 0.5, [] {
    for (int depth : {0, 3, 20})
      for (int i = 0; i < 200; ++i) {
        memtrail_cache_chain_a(depth);
        memtrail_cache_chain_b(depth);
      }
    for (int depth : {0, 3, 20})
      for (int i = 0; i < 100; ++i) {
        memtrail_cache_chain_a(depth);
        memtrail_cache_chain_b(depth);
        memtrail_cache_chain_c(depth);
      }
    return memtrail::detail::stack_cache_counts();
  });
}

TEST(StackCache, ThreadThatSpentItsWalksStillLearnsALaterLoop) {
  // Three chains thrashing one set spend every walk of the thread's budget
  // and never hit (a Python program's imports did that): the loop after
  // them was once never learnt, as only hits earned walks back.
  constexpr std::size_t kThrash = 3 * 300, kLoop = 3000;
  Outcome on = run_and_check("cache-spent.mtr", true, [] {
    for (int i = 0; i < 300; ++i) {
      memtrail_cache_chain_a(0);
      memtrail_cache_chain_b(0);
      memtrail_cache_chain_c(0);
    }
    auto before = memtrail::detail::stack_cache_counts();
    for (std::size_t i = 0; i < kLoop; ++i) memtrail_cache_recurse(5, 0);
    auto after = memtrail::detail::stack_cache_counts();
    return memtrail::detail::StackCacheCounts{after.hits - before.hits,
                                              after.misses - before.misses, 0};
  });
  EXPECT_EQ(on.checked, kThrash + kLoop);
  EXPECT_GE(on.counts.hits, kLoop / 2)
      << "loop hits " << on.counts.hits << " misses " << on.counts.misses;
}

TEST(StackCache, AllocaOfVaryingSizes) {
  both_modes("cache-alloca.mtr", 2 * (9 * 40 + 4 * 4 * 40), 0.0, [] {
    for (int rep = 0; rep < 2; ++rep) {
      for (int depth = 0; depth < 9; ++depth)
        for (int bytes = 0; bytes < 40 * 16; bytes += 16) memtrail_cache_alloca(depth, bytes);
      for (int above = 0; above < 4; ++above)
        for (int below = 0; below < 4; ++below)
          for (int bytes = 0; bytes < 40 * 16; bytes += 16)
            memtrail_cache_alloca_outer(above, below, bytes);
    }
    return memtrail::detail::stack_cache_counts();
  });
}

TEST(StackCache, ManyThreads) {
  constexpr int kThreads = 8, kPerThread = 5 * 40;
  both_modes("cache-threads.mtr", kThreads * kPerThread, 0.5, [] {
    std::atomic<std::uint64_t> hits{0}, misses{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        for (int rep = 0; rep < 5; ++rep)
          for (int depth = 0; depth < 40; ++depth) memtrail_cache_recurse((depth + t) % 40, t);
        auto c = memtrail::detail::stack_cache_counts();
        hits += c.hits;
        misses += c.misses;
      });
    for (auto& th : threads) th.join();
    return memtrail::detail::StackCacheCounts{hits.load(), misses.load(), 0};
  });
}

TEST(StackCache, SignalHandlerThatRecordsIsNeverServedTheInterruptedChain) {
  struct sigaction sa = {}, old_usr1 = {}, old_prof = {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR1, &sa, &old_usr1), 0);
  ASSERT_EQ(sigaction(SIGPROF, &sa, &old_prof), 0);
  // Raised at known depths: every leaf pair around the raise plus the
  // handler's own event.
  both_modes("cache-raise.mtr", 6 * 30 * 3, 0.2, [] {
    for (int rep = 0; rep < 6; ++rep)
      for (int depth = 0; depth < 30; ++depth) memtrail_cache_raise(depth);
    return memtrail::detail::stack_cache_counts();
  });
  // A profiling timer interrupting recursions anywhere, including between
  // a cached chain's validation reads: the handler's events are checked
  // against their own unwinds (the count varies, so each mode checks only
  // itself).
  for (bool cache : {false, true}) {
    Outcome o = run_and_check("cache-timer.mtr", cache, [] {
      itimerval every{{0, 200}, {0, 200}};
      setitimer(ITIMER_PROF, &every, nullptr);
      for (int rep = 0; rep < 40; ++rep)
        for (int depth = 0; depth < 60; ++depth) memtrail_cache_recurse(depth, 0);
      itimerval off{};
      setitimer(ITIMER_PROF, &off, nullptr);
      return memtrail::detail::stack_cache_counts();
    });
    EXPECT_GE(o.checked, 40u * 60u);
  }
  sigaction(SIGUSR1, &old_usr1, nullptr);
  sigaction(SIGPROF, &old_prof, nullptr);
}

TEST(StackCache, AChainThatCannotBeCachedIsWalkedOnce) {
  // A chain through a signal frame is never cached. Hits on a short chain
  // earn learning walks; the handler's chain must not spend them on the
  // same failed walk at every event.
  struct sigaction sa = {}, old_usr1 = {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR1, &sa, &old_usr1), 0);
  both_modes("cache-unlearnable.mtr", 40 * (3 + 100), 0.5, [] {
    for (int i = 0; i < 40; ++i) {
      memtrail_cache_raise(2);
      for (int k = 0; k < 100; ++k) memtrail_cache_recurse(12, 0);
    }
    auto counts = memtrail::detail::stack_cache_counts();
    // At most one walk for each of the four chains: the two around the
    // raise, the handler's (which fails) and the short one. (Fewer when two
    // chains' hashes share a slot of the sent-stack table: a chain is
    // learned only once seen before.)
    if (counts.hits + counts.misses > 0) {
      EXPECT_LE(counts.walks, 4u) << "hits " << counts.hits << " misses " << counts.misses
                                  << " unwalkable " << counts.unwalkable;
    }
    return counts;
  });
  sigaction(SIGUSR1, &old_usr1, nullptr);
}

// A coroutine's stack (makecontext) is not the thread's: its events unwind
// (no hit, no miss counted) and are still exact.
ucontext_t g_main_context, g_coroutine_context;
void coroutine_body() {
  for (int rep = 0; rep < 3; ++rep)
    for (int depth = 0; depth < 20; ++depth) memtrail_cache_recurse(depth, 8);
  swapcontext(&g_coroutine_context, &g_main_context);
}

TEST(StackCache, ForeignStackIsNotCached) {
  std::vector<char> stack(1 << 20);
  for (bool cache : {false, true}) {
    Outcome o = run_and_check("cache-coroutine.mtr", cache, [&] {
      getcontext(&g_coroutine_context);
      g_coroutine_context.uc_stack.ss_sp = stack.data();
      g_coroutine_context.uc_stack.ss_size = stack.size();
      g_coroutine_context.uc_link = &g_main_context;
      makecontext(&g_coroutine_context, coroutine_body, 0);
      swapcontext(&g_main_context, &g_coroutine_context);
      return memtrail::detail::stack_cache_counts();
    });
    EXPECT_EQ(o.checked, 3u * 20u);
    EXPECT_EQ(o.counts.hits + o.counts.misses, 0u);
  }
}

TEST(StackCache, EnvironmentSwitch) {
  setenv("MEMTRAIL_STACK_CACHE", "0", 1);
  EXPECT_FALSE(memtrail::RecorderOptions::from_environment().stack_cache);
  setenv("MEMTRAIL_STACK_CACHE", "1", 1);
  EXPECT_TRUE(memtrail::RecorderOptions::from_environment().stack_cache);
  unsetenv("MEMTRAIL_STACK_CACHE");
  EXPECT_TRUE(memtrail::RecorderOptions::from_environment().stack_cache);
}

}  // namespace
