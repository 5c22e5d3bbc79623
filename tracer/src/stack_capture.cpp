// The out-of-line side of stack capture (stack_capture.hpp): the code
// ranges an event's stack starts below, the choice of its first frame, its
// hash, and learning a chain for the stack cache.
#include "stack_capture.hpp"

namespace memtrail::runtime {

CodeRange g_internal[kMaxInternalRanges];
std::atomic<int> g_internal_count{0};
std::uintptr_t g_forwarder[kMaxForwarders];
std::atomic<int> g_forwarder_count{0};
CodeRange g_recorder_code{0, 0};

std::uint64_t hash_stack(const std::uint64_t* ips, int n) {
  // Two independent multiply chains (even and odd frames) halve the latency;
  // murmur3's finaliser then spreads every bit over the whole word.
  std::uint64_t a = 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(n + 1), b = ~a;
  int i = 0;
  for (; i + 1 < n; i += 2) {
    a = (a ^ ips[i]) * 0xff51afd7ed558ccdull;
    b = (b ^ ips[i + 1]) * 0xc4ceb9fe1a85ec53ull;
  }
  if (i < n) a = (a ^ ips[i]) * 0xff51afd7ed558ccdull;
  std::uint64_t h = a ^ (b >> 31 | b << 33);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h | 1;
}

namespace {

bool is_internal_code(std::uint64_t ip) {
  int n = g_internal_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i)
    if (in_range(g_internal[i], ip)) return true;
  return false;
}

// True when return address `ip` lies in a registered forwarder. The exact
// test (the unwind tables' function start) runs only near a forwarder's
// start: an out-of-line forwarder is a few instructions long.
bool in_forwarder(std::uint64_t ip) {
  constexpr std::uint64_t kReach = 1024;
  int n = g_forwarder_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    if (ip - 1 - g_forwarder[i] >= kReach) continue;
    KeepErrno keep_errno;
    unw_proc_info_t pi;
    if (unw_get_proc_info_by_ip(unw_local_addr_space, ip - 1, &pi, nullptr) == 0 &&
        pi.start_ip == g_forwarder[i])
      return true;
  }
  return false;
}

// Stores a walked chain whose frames 1..checks decided the event's stack.
void remember(StackCacheEntry& e, std::uintptr_t key, const void* entry, int skip, int ranges,
              const std::uint64_t* ips, const StackWalk& walk, int checks, int first, int count,
              std::uint64_t hash) {
  e.key_frame = key;
  e.entry = entry;
  e.skip = static_cast<std::uint8_t>(skip);
  e.internal_ranges = ranges;
  e.hash = hash;
  e.checks = static_cast<std::uint16_t>(checks);
  e.first = static_cast<std::uint16_t>(first);
  e.count = static_cast<std::uint16_t>(count);
  for (int i = 0; i < checks; ++i) {
    e.slot[i] = walk.slot[i];
    e.ip[i] = ips[i + 1];
  }
  int fp = 0;
  for (int i = 0; i < walk.fp_count; ++i)
    if (walk.fp_frame[i] < checks) {
      e.fp_slot[fp] = walk.fp_slot[i];
      e.fp_value[fp] = walk.fp_value[i];
      ++fp;
    }
  e.fp_checks = static_cast<std::uint8_t>(fp);
}

}  // namespace

int select_first(const std::uint64_t* ips, int n, int skip, const void* entry, bool& found) {
  int first = 0;
  while (first < n && in_range(g_recorder_code, ips[first])) ++first;
  first = std::min(first + skip, n);
  if (entry) {  // inside an allocator: start at its entry point's caller
    for (int i = skip; i < n; ++i)
      if (ips[i] == reinterpret_cast<std::uintptr_t>(entry)) {
        first = i;
        found = true;
        break;
      }
    if (found)  // called through an out-of-line forwarder: start at its caller
      while (first + 1 < n && in_forwarder(ips[first])) ++first;
  }
  while (first < n && is_internal_code(ips[first])) ++first;
  return first;
}

// Out of line so that record_impl's frame keeps its size: the leak scan
// reads the live part of the stack conservatively, and a bigger recorder
// frame moves where stale block addresses lie.
__attribute__((noinline)) void learn_chain(ThreadBuffer* tb, StackCache* cache, std::uintptr_t key,
                                           const void* entry, int skip, int ranges, int limit,
                                           const std::uint64_t* ips, int n, int checks, int first,
                                           int count, std::uint64_t hash) {
  ++tb->stack_cache_walks;
  KeepErrno keep_errno;
  StackWalk walk;
  std::uint64_t walked[kMaxStackDepth + kCaptureSlack];
  int w = walk_stack(key, tb->stack_high, 1, limit, walked, walk);
  bool same = w == n && std::equal(walked + 1, walked + n, ips + 1);
  if (!same) ++tb->stack_cache_unwalkable;
  if (same && walk.cacheable && walk.fp_bad_from >= checks)
    remember(cache->victim(key, entry, skip), key, entry, skip, ranges, ips, walk, checks, first,
             count, hash);
  else if (hash != 0)  // 0: no frames selected, and the table's empty mark
    tb->tables->unlearnable[hash % ThreadBuffer::kUnlearnableSlots] = hash;
  asm volatile("" ::: "memory");  // not a tail call
}

__attribute__((noinline, cold)) void warm_backtrace_cache() {
  ++t_internal;  // deeper than the recorder's own guard: the tracer's, dropped
  std::uint64_t warm[4];
  backtrace_keeping_errno(warm, 4);
  --t_internal;
}

}  // namespace memtrail::runtime
