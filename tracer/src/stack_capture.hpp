// Stack capture for record_impl: the call chain of the event being
// recorded, from the thread's validated stack cache (stack_cache.hpp) when
// the chain was seen before at the same frame, else from unw_backtrace, and
// past the recorder's own frames (select_first).
//
// capture_stack() is always inlined into record_impl: unw_backtrace's frame
// 0 must be record_impl, whose frame address keys the cache, and learn_chain
// (out of line, called from record_impl's frame) starts its walk one frame
// up from itself. The code ranges it skips are registered by recorder.cpp
// (add_internal_code_locked, add_recorder_code_locked, add_forwarder).
#pragma once

#ifndef UNW_LOCAL_ONLY
#define UNW_LOCAL_ONLY  // _UL* local-unwinding entry points of libunwind.so
#endif
#include <libunwind.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include <cerrno>

#include "memtrail/recorder.hpp"
#include "runtime.hpp"
#include "stack_cache.hpp"

#define MEMTRAIL_HIDDEN __attribute__((visibility("hidden")))

namespace memtrail::runtime {

// Executable ranges of the recorder's own modules (libmemtrail.so, the
// preload library): frames there are machinery, never the program's call
// site, whatever the compiler inlined. Written before tracing starts (or
// under the lifecycle lock), read lock-free.
struct CodeRange {
  std::uintptr_t low, high;
};
inline constexpr int kMaxInternalRanges = 8;
extern CodeRange g_internal[kMaxInternalRanges] MEMTRAIL_HIDDEN;
extern std::atomic<int> g_internal_count MEMTRAIL_HIDDEN;

// Function starts of out-of-line copies of inline forwarders to allocator
// entry points (std::pmr::memory_resource::allocate in a program built at
// -O0; see detail::add_forwarder): a pool event's stack starts at their
// caller. Appended under the lifecycle lock, read lock-free.
inline constexpr int kMaxForwarders = 8;
extern std::uintptr_t g_forwarder[kMaxForwarders] MEMTRAIL_HIDDEN;
extern std::atomic<int> g_forwarder_count MEMTRAIL_HIDDEN;

// libmemtrail.so's own executable range (set by start() before tracing):
// the recorder frames at the top of every captured stack, however many the
// build type leaves out of line; `skip_frames` counts from below them.
extern CodeRange g_recorder_code MEMTRAIL_HIDDEN;

inline bool in_range(const CodeRange& r, std::uint64_t ip) {
  return ip - 1 - r.low < r.high - r.low;
}

// 64-bit hash of an ip array, never 0. Repeats are recognised by hash alone
// (no verifying walk on the program thread): a false match needs two of the
// thread's stacks to collide in all 64 bits.
MEMTRAIL_HIDDEN std::uint64_t hash_stack(const std::uint64_t* ips, int n);

// The first frame of ips[0..n) (unw_backtrace's numbering) that an event
// records: past the recorder's leading frames (by address, so an -O0 build's
// extra out-of-line helpers count too) and `skip` more, at the allocator
// entry's caller when `entry` is one of the frames (`found`), then past the
// recorder's own modules.
MEMTRAIL_HIDDEN int select_first(const std::uint64_t* ips, int n, int skip, const void* entry,
                                 bool& found);

// Walks the stack of record_impl (key frame `key`, one frame up from
// learn_chain) and caches the chain if the walk vouches for the frames
// unw_backtrace gave (ips[0..n)).
MEMTRAIL_HIDDEN void learn_chain(ThreadBuffer* tb, StackCache* cache, std::uintptr_t key,
                                 const void* entry, int skip, int ranges, int limit,
                                 const std::uint64_t* ips, int n, int checks, int first, int count,
                                 std::uint64_t hash);

// The recorder's slow paths make system calls that may fail harmlessly (a
// futex wait times out) and set errno; the program's malloc and free must
// not show it (free keeps errno: POSIX 2024, glibc 2.33).
struct KeepErrno {
  int saved = errno;
  ~KeepErrno() { errno = saved; }
};

// libunwind may probe memory with system calls that fail (and set errno).
// Always inlined, in every build type: unw_backtrace's frame 0 must be
// record_impl, where the stack cache's walk (walk_stack) starts too.
[[gnu::always_inline]] inline int backtrace_keeping_errno(std::uint64_t* ips, int limit) {
  KeepErrno keep_errno;
  return unw_backtrace(reinterpret_cast<void**>(ips), limit);
}

// Has unw_backtrace map and fill the calling thread's trace cache now, as
// the tracer's own doing: inside an event's walk, its mmap would reach the
// preload's interposer at the recorder's guard level, where an event is
// taken for a signal handler's (queued and recorded as the program's).
MEMTRAIL_HIDDEN void warm_backtrace_cache();

// Room past the recorded frames for the ones skipped (the recorder's own).
inline constexpr int kCaptureSlack = 32;

// An event's native call chain: `count` frames at `frames` (into the
// caller's ips buffer, or into a stack cache entry), and their hash_stack
// (0 when count is 0).
struct CapturedStack {
  const std::uint64_t* frames;
  int count = 0;
  std::uint64_t hash = 0;
};

// The chain unw_backtrace gives, past the recorder's frames and `skip` more.
// A thread's first kSteppedUnwinds events get it by unw_step instead
// (backtrace_by_steps): unw_backtrace's first call on a thread maps and
// fills a 256 KiB trace cache for it, which a thread that allocates a few
// times in its life (a pool's idle worker) would keep resident to its end.
[[gnu::always_inline]] inline CapturedStack unwind_stack(const Session* s, ThreadBuffer* tb,
                                                         int skip, const void* entry, int limit,
                                                         std::uint64_t* ips, int& n, int& first,
                                                         bool& found) {
  if (__builtin_expect(tb->stepped_unwinds_left > 0, 0)) {
    if (--tb->stepped_unwinds_left == 0) warm_backtrace_cache();
    n = backtrace_by_steps(ips, limit);
  } else {
    n = backtrace_keeping_errno(ips, limit);
  }
  found = false;
  first = select_first(ips, n, skip, entry, found);
  CapturedStack out{ips + first};
  out.count = n > first ? std::min(n - first, s->stack_frames) : 0;
  if (out.count) out.hash = hash_stack(out.frames, out.count);
  return out;
}

// A cache miss: unwinds, and learns the chain (an unw_step walk, ~60 times
// an unw_backtrace: libunwind takes a signal-masking lock per step) only
// for a chain seen before (its hash is in the sent-stack table), and only
// while hits have paid for the walks.
[[gnu::always_inline]] inline CapturedStack unwind_and_learn(const Session* s, ThreadBuffer* tb,
                                                             StackCache* cache, std::uintptr_t key,
                                                             int skip, const void* entry,
                                                             int ranges, int limit,
                                                             std::uint64_t* ips) {
  // Misses earn too, slowly: a thread whose walks were all spent on chains
  // that never hit (a Python program's imports) would otherwise never
  // learn the loop that follows them.
  if ((++tb->stack_cache_misses % kMissesPerCredit) == 0 && tb->walk_credit < kMaxWalkCredit)
    ++tb->walk_credit;
  int n, first;
  bool found;
  CapturedStack out = unwind_stack(s, tb, skip, entry, limit, ips, n, first, found);
  std::uint64_t hash = out.hash;
  // Frames 1..checks decided the result: all of them when an allocator
  // entry was looked for and not found (or nothing was selected).
  int checks = (entry && !found) || out.count == 0 ? n - 1 : first + out.count - 1;
  std::uint32_t sent = static_cast<std::uint32_t>(hash >> 32) & (ThreadBuffer::kStackSlots - 1);
  bool seen = out.count == 0 || tb->tables->sent_stack_hash[sent] == hash ||
              tb->tables->spliced_native_hash[hash % ThreadBuffer::kSplicedSlots] == hash;
  if (tb->walk_credit >= kWalkCost && checks >= 1 && checks <= StackCacheEntry::kFrames && seen &&
      (hash == 0 || tb->tables->unlearnable[hash % ThreadBuffer::kUnlearnableSlots] != hash)) {
    tb->walk_credit -= kWalkCost;
    learn_chain(tb, cache, key, entry, skip, ranges, limit, ips, n, checks, first, out.count, hash);
  }
  return out;
}

// The native call chain of the event record_impl (frame address `key`) is
// recording, `skip_frames` frames below the recorder's own; `ips` has room
// for kMaxStackDepth + kCaptureSlack frames.
[[gnu::always_inline]] inline CapturedStack capture_stack(const Session* s, ThreadBuffer* tb,
                                                          int skip_frames, std::uintptr_t key,
                                                          std::uint64_t* ips) {
  int skip = skip_frames > 0 ? std::min(skip_frames, 16) : 0;
  const void* entry = detail::t_allocator_entry;
  int limit =
      std::min(s->stack_frames + skip + 2 + (entry ? 16 : 0), kMaxStackDepth + kCaptureSlack);
  StackCache* cache = tb->stack_cache;
  // Only on the thread's own stack (not a sigaltstack or a coroutine's),
  // whose memory above the key frame stays mapped: the slot reads of a hit
  // may then never fault.
  if (!cache || key - tb->stack_low >= tb->stack_high - tb->stack_low) {
    int n, first;
    bool found;
    return unwind_stack(s, tb, skip, entry, limit, ips, n, first, found);
  }
  int ranges = g_internal_count.load(std::memory_order_acquire);
  if (const StackCacheEntry* hit = cache->find(key, entry, skip, ranges)) {
    ++tb->stack_cache_hits;
    if (tb->walk_credit < kMaxWalkCredit) ++tb->walk_credit;
    return CapturedStack{hit->frames(), hit->count, hit->hash};
  }
  return unwind_and_learn(s, tb, cache, key, skip, entry, ranges, limit, ips);
}

}  // namespace memtrail::runtime
