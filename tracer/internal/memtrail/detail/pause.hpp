// memtrail_pause() / memtrail_resume() (c_api.h): while the depth is above
// zero the recorder drops the events that hand out memory. Not installed.
#pragma once

#include <atomic>

#include "memtrail/event.hpp"

namespace memtrail::detail {

extern std::atomic<int> g_pause_depth;

// True for an event that memtrail_pause() keeps out of the trace: one that
// hands memory out. Frees stay, so blocks allocated before a pause end
// where they really end.
[[gnu::always_inline]] inline bool dropped_while_paused(EventKind kind) {
  return __builtin_expect(g_pause_depth.load(std::memory_order_relaxed) != 0, 0) &&
         (kind == EventKind::alloc || kind == EventKind::reuse ||
          kind == EventKind::segment_reserve);
}

}  // namespace memtrail::detail
