// The slow side of the stack cache: an unw_step walk that also records where
// each frame's return address and frame pointer live (see stack_cache.hpp).
#define UNW_LOCAL_ONLY
#include "stack_cache.hpp"

#include <libunwind.h>

#include <cerrno>
#include <climits>

namespace memtrail::runtime {

namespace {

// slot - key_frame as an int32, or -1 when below the key frame or not on
// the stack [key_frame, stack_high).
std::int32_t offset_from(std::uintptr_t key_frame, std::uintptr_t stack_high, std::uintptr_t slot) {
  if (slot < key_frame || slot + 8 > stack_high ||
      slot - key_frame > static_cast<std::uintptr_t>(INT32_MAX))
    return -1;
  return static_cast<std::int32_t>(slot - key_frame);
}

}  // namespace

__attribute__((noinline)) int walk_stack(std::uintptr_t key_frame, std::uintptr_t stack_high,
                                         int between, int limit, std::uint64_t* ips,
                                         StackWalk& walk) {
  unw_context_t uc;
  unw_cursor_t c;
  if (unw_getcontext(&uc) != 0 || unw_init_local(&c, &uc) != 0) return -1;
  // Frame 0 is walk_stack itself, then `between` frames: step to
  // record_impl, unw_backtrace's frame 0.
  for (int i = 0; i <= between; ++i)
    if (unw_step(&c) <= 0) return -1;
  unw_word_t ip = 0;
  unw_get_reg(&c, UNW_REG_IP, &ip);
  ips[0] = ip;
  int n = 1;
  std::uintptr_t fp_limit = stack_high ? stack_high : key_frame + (std::uintptr_t{1} << 30);
  while (n < limit && unw_step(&c) > 0) {
    unw_word_t sp = 0, rbp = 0;
    unw_get_reg(&c, UNW_REG_IP, &ip);
    unw_get_reg(&c, UNW_REG_SP, &sp);
    // The frame above a signal frame was interrupted, not called: its ip is
    // not a return address and unw_backtrace may report it differently.
    if (unw_is_signal_frame(&c) > 0) return -1;
    if (sp < 8 || *reinterpret_cast<const std::uint64_t*>(sp - 8) != ip) return -1;
    int b = n;
    ips[n++] = ip;
    if (b <= StackCacheEntry::kFrames) {
      std::int32_t off = offset_from(key_frame, fp_limit, sp - 8);
      if (off < 0) walk.cacheable = false;
      walk.slot[b - 1] = off;
    }
    // An rbp pointing into the stack above this frame may be what the
    // unwinder computes the caller's frame from: check it where it is saved.
    unw_get_reg(&c, UNW_X86_64_RBP, &rbp);
    if (rbp >= sp && rbp < fp_limit) {
      unw_save_loc_t loc;
      std::int32_t off = -1;
      if (unw_get_save_loc(&c, UNW_X86_64_RBP, &loc) == 0 && loc.type == UNW_SLT_MEMORY)
        off = offset_from(key_frame, fp_limit, loc.u.addr);
      if (off < 0 || walk.fp_count == StackCacheEntry::kFpChecks) {
        if (b < walk.fp_bad_from) walk.fp_bad_from = b;
      } else {
        walk.fp_frame[walk.fp_count] = static_cast<std::uint16_t>(b);
        walk.fp_slot[walk.fp_count] = off;
        walk.fp_value[walk.fp_count] = rbp;
        ++walk.fp_count;
      }
    }
  }
  return n;
}

// libunwind's slow_backtrace, as unw_backtrace falls back to it: every
// frame's ip from the caller on, in the same numbering.
__attribute__((noinline)) int backtrace_by_steps(std::uint64_t* ips, int limit) {
  int saved_errno = errno;  // libunwind probes memory with system calls that may fail
  unw_context_t uc;
  unw_cursor_t c;
  int n = 0;
  if (limit > 0 && unw_getcontext(&uc) == 0 && unw_init_local(&c, &uc) == 0)
    while (n < limit && unw_step(&c) > 0) {
      unw_word_t ip = 0;
      if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0) break;
      ips[n++] = ip;
    }
  errno = saved_errno;
  asm volatile("" ::: "memory");  // not a tail call: the caller's frame is frame 0
  return n;
}

}  // namespace memtrail::runtime
