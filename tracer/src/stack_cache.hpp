// Per-thread cache of unwound call chains, validated against the live stack
// on every use, so an event from a call path seen before costs a few loads
// and compares instead of a libunwind walk (~180 ns for the churn benchmark's
// stacks).
//
// A miss is served by unw_backtrace. Learning the chain (see kWalkCost for
// when) walks the stack again with unw_init_local/unw_step and keeps, for every frame k >= 1, its
// ip and the stack slot that holds it (on x86-64 the return address of frame k lies at SP_k - 8,
// SP_k being the unwinder's stack pointer in frame k); a chain is kept only if every slot really
// holds its ip and the walk's ips equal unw_backtrace's. Why it is sound: the entry is keyed by
// record_impl's own frame address and stores the slots as offsets from it. On a later event with
// the same key frame, the cached chain is served only if every slot still holds the cached ip. By
// induction over the frames: record_impl's frame is fixed by the key; if frames 1..k hold the
// cached ips at the cached slots, frame k's unwind rule (chosen by its ip) gives the same canonical
// frame address, so frame k+1's return address is at the cached slot, and so on: the walk
// unw_backtrace would do yields exactly the cached frames.
//
// The induction needs each frame's CFA to follow from its ip and stack
// pointer. A frame addressed through %rbp (a function with alloca or a
// variable-length array, -O0 code, stack realignment) has a CFA that follows
// from its rbp value instead, so for every frame whose rbp points into the
// stack above it the entry also keeps that rbp value and where a callee
// saved it, and checks it too. Hence a dynamic frame whose size changed
// moves the outer slots and its saved rbp: the check fails and the event
// unwinds (even if stale stack memory at the old slots still holds the old
// return addresses). Not covered: a CFA computed by a DWARF expression from
// memory other than the checked slots (gcc's realigned-stack prologue of a
// thread's first frame, which sits at a fixed place for the thread's life).
//
// Used only while record_impl runs on the thread's own stack (bounds from
// pthread_getattr_np): every cached slot lies between the key frame and the
// stack's top, so re-reading it never faults; on a sigaltstack or a
// coroutine's stack, events unwind as before.
//
// Not cached: chains through a signal frame (unw_is_signal_frame: the frame
// above a signal frame is where the signal interrupted, not a return
// address), chains whose slot check fails at capture, and chains longer than
// kFrames validated frames; those events use unw_backtrace as before. A
// signal handler that allocates can never be served an interrupted code's
// chain: the handler's chain holds __restore_rt at a slot where a cached
// (signal-free) chain holds some other ip.
//
// MEMTRAIL_STACK_CACHE=0 (RecorderOptions::stack_cache) turns it off.
#pragma once

#include <climits>
#include <cstdint>

namespace memtrail::runtime {

// Learning budget, in hits. A miss is served by unw_backtrace; learning its
// chain takes an unw_step walk, ~60 times the cost of an unw_backtrace
// (libunwind 1.6 takes a signal-masking lock per step), so a chain is
// walked only when it was seen before (its hash is in the thread's
// sent-stack table) and only while hits have paid for the walks: a walk
// costs kWalkCost, a hit earns 1, every kMissesPerCredit-th miss earns 1,
// a thread starts with kInitialWalks walks' worth. Walks thus never cost
// much more than the hits they bring: a program whose chains never repeat
// at one frame address pays a few ms per thread, then at most one walk per
// kMissesPerCredit * kWalkCost misses (~6% of their unwinding).
inline constexpr std::int32_t kWalkCost = 64;
inline constexpr std::int32_t kInitialWalks = 64;
inline constexpr std::int32_t kMaxWalkCredit = 64 * kWalkCost;
inline constexpr std::uint64_t kMissesPerCredit = 16;

// Plain data: the table lives in fresh (zeroed) mmap memory from the
// session's arena, and all-zero is an empty table; it is never constructed,
// so a thread's first event does not write all of it.
struct StackCacheEntry {
  static constexpr int kFrames = 80;         // frames checked per chain (bt indices 1..checks)
  static constexpr int kFpChecks = kFrames;  // saved rbp values checked per chain

  std::uintptr_t key_frame;      // record_impl's frame address; 0 = empty
  const void* entry;             // t_allocator_entry at capture
  std::uint64_t hash;            // hash_stack of the selected frames
  std::int32_t internal_ranges;  // is_internal_code's range count at capture
  std::uint16_t checks;          // frames 1..checks are checked
  std::uint16_t first;           // selected frames: bt indices first..first+count-1
  std::uint16_t count;
  std::uint8_t skip;
  std::uint8_t fp_checks;
  std::int32_t slot[kFrames];  // slot of frame k+1 - key_frame
  std::uint64_t ip[kFrames];   // ip of frame k+1
  std::int32_t fp_slot[kFpChecks];
  std::uint64_t fp_value[kFpChecks];

  // True if the live stack still holds this chain: every cached return
  // address, and every saved rbp value (a program built with frame pointers
  // has one per frame). Reads only slots above the key frame of the
  // current call, inside the thread's stack.
  bool valid(std::uintptr_t frame) const {
    return holds(frame, slot, ip, checks) && holds(frame, fp_slot, fp_value, fp_checks);
  }
  // The selected frames, innermost first (bt index b lives at ip[b - 1]).
  const std::uint64_t* frames() const { return ip + first - 1; }

 private:
  // Whether the words at frame + at[0..n) equal want[0..n). Four per branch:
  // a chain is nearly always intact, so the mismatch bits are gathered and
  // tested once per group.
  [[gnu::always_inline]] static bool holds(std::uintptr_t frame, const std::int32_t* at,
                                           const std::uint64_t* want, int n) {
    auto word = [frame, at](int k) {
      return *reinterpret_cast<const std::uint64_t*>(frame + at[k]);
    };
    int k = 0;
    for (; k + 4 <= n; k += 4)
      if (((word(k) ^ want[k]) | (word(k + 1) ^ want[k + 1]) | (word(k + 2) ^ want[k + 2]) |
           (word(k + 3) ^ want[k + 3])) != 0)
        return false;
    for (; k < n; ++k)
      if (word(k) != want[k]) return false;
    return true;
  }
};

// 2-way set-associative, most recently used way first.
struct StackCache {
  static constexpr int kSets = 128;
  StackCacheEntry way[kSets][2];
  std::uint8_t mru[kSets];

  static int set_of(std::uintptr_t frame, const void* entry, int skip) {
    std::uint64_t x = (frame >> 3) ^ reinterpret_cast<std::uintptr_t>(entry) ^
                      static_cast<std::uint64_t>(skip) << 40;
    return static_cast<int>((x * 0x9e3779b97f4a7c15ull) >> 57);  // 7 bits = kSets
  }
  const StackCacheEntry* find(std::uintptr_t frame, const void* entry, int skip,
                              std::int32_t internal_ranges) {
    int s = set_of(frame, entry, skip);
    for (int k = 0; k < 2; ++k) {
      int w = k ^ mru[s];
      const StackCacheEntry& e = way[s][w];
      if (e.key_frame == frame && e.entry == entry && e.skip == skip &&
          e.internal_ranges == internal_ranges && e.valid(frame)) {
        mru[s] = static_cast<std::uint8_t>(w);
        return &e;
      }
    }
    return nullptr;
  }
  // The way a new chain for this key replaces (the least recently used),
  // made the most recently used.
  StackCacheEntry& victim(std::uintptr_t frame, const void* entry, int skip) {
    int s = set_of(frame, entry, skip);
    int w = mru[s] ^ 1;
    mru[s] = static_cast<std::uint8_t>(w);
    return way[s][w];
  }
};
static_assert(StackCache::kSets == 128, "set_of keeps 7 bits");

// What a walk found about one stack, in unw_backtrace's numbering (frame 0 is
// record_impl, the caller of walk_stack).
struct StackWalk {
  bool cacheable = true;
  std::int32_t slot[StackCacheEntry::kFrames];  // frame b's slot - key_frame, at [b - 1]
  int fp_count = 0;
  int fp_bad_from = INT_MAX;  // first frame whose rbp needs a check that was not recorded
  std::uint16_t fp_frame[StackCacheEntry::kFpChecks];  // frame whose rbp is checked
  std::int32_t fp_slot[StackCacheEntry::kFpChecks];
  std::uint64_t fp_value[StackCacheEntry::kFpChecks];
};

// Unwinds the calling thread's stack from record_impl (frame address
// `key_frame`, `between` frames above walk_stack): ips[0..n) as unw_backtrace called from
// record_impl returns them (ips[0] is record_impl's own, at another offset;
// nobody uses it), with at most `limit` frames. Returns n, or -1 when the
// walk found a frame it cannot vouch for (signal frame, slot mismatch):
// then the caller must use unw_backtrace. `walk.cacheable` is false when
// the chain may not be cached (too long, odd frame pointer save). `stack_high`
// bounds what counts as a frame pointer (0: unknown).
int walk_stack(std::uintptr_t key_frame, std::uintptr_t stack_high, int between, int limit,
               std::uint64_t* ips, StackWalk& walk);

// What unw_backtrace(ips, limit) called from the caller of this function
// would return (ips[0] is the caller's own frame, at another offset), but
// by unw_step: libunwind's slow path, which takes no per-thread memory.
// unw_backtrace maps a 256 KiB trace cache for each thread it runs on and
// fills it at once, so a thread's first events unwind this way
// (kSteppedUnwinds). Keeps errno.
int backtrace_by_steps(std::uint64_t* ips, int limit);

// A thread's events unwound by backtrace_by_steps before unw_backtrace
// takes over: about 15 us each against unw_backtrace's ~1 us, and less in
// all than unw_backtrace's first call on a thread (mapping and filling its
// cache: ~60 us). A thread with more events pays the cache's 256 KiB once.
inline constexpr std::int32_t kSteppedUnwinds = 16;

}  // namespace memtrail::runtime
