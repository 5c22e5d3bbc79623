#include "early_events.hpp"

#include <cstdint>

#include "linker_blocks.hpp"
#include "memtrail/detail/recorder_internal.hpp"
#include "own_dependencies.hpp"
#include "preload_state.hpp"

namespace memtrail::preload {

std::atomic<bool> g_early_open{true};

namespace {

// Start-up allocations are few (a C++ program: ~10; python3: ~100), so 4096
// events of 32 frames each is ample; static storage, touched only as used.
constexpr std::size_t kMaxEvents = 4096;
constexpr int kMaxFrames = 32;

struct EarlyEvent {
  std::uint64_t address, size, alignment;
  const void* caller;  // return address of the interposer: ld.so's or not
  EventKind kind;
  AllocFn fn;
  int frames;
  std::uint64_t ips[kMaxFrames];
};

EarlyEvent g_events[kMaxEvents];
std::atomic<std::size_t> g_claimed{0};  // slots handed out
std::atomic<std::size_t> g_written{0};  // slots filled (published)
std::atomic<std::size_t> g_dropped{0};

EarlyEvent* claim() {
  std::size_t i = g_claimed.fetch_add(1, std::memory_order_relaxed);
  if (i >= kMaxEvents) {
    g_dropped.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  return &g_events[i];
}

void publish() {
  g_written.fetch_add(1, std::memory_order_release);
}

// Blocks made by a library only the tracer needs (libstdc++'s start-up pool
// in a C program): not the program's, so neither they nor their frees are
// recorded.
class NotTheProgramsBlocks {
 public:
  bool allocated(const EarlyEvent& e) {
    int i = 0;
    while (i < e.frames && deps_.in_tracer(e.ips[i])) ++i;
    if (i == e.frames || !deps_.only_ours(e.ips[i])) return false;
    if (count_ < kMax) blocks_[count_++] = e.address;
    return true;
  }
  bool freed(const EarlyEvent& e) {
    for (int i = 0; i < count_; ++i)
      if (blocks_[i] == e.address) {
        blocks_[i] = blocks_[--count_];
        return true;
      }
    return false;
  }

 private:
  static constexpr int kMax = 64;
  OwnDependencies deps_;
  std::uint64_t blocks_[kMax];
  int count_ = 0;
};

}  // namespace

// Not inlined: its frame and the interposer's are the ones the recorder
// skips (both lie in this library).
[[gnu::noinline]] void early_alloc(const void* block, std::size_t requested, AllocFn fn,
                                   std::size_t alignment, const void* caller) {
  if (detail::thread_is_internal()) return;
  EarlyEvent* e = claim();
  if (e == nullptr) return;
  *e = EarlyEvent{reinterpret_cast<std::uintptr_t>(block),
                  requested,
                  alignment,
                  caller,
                  EventKind::alloc,
                  fn,
                  0,
                  {}};
  e->frames = detail::backtrace_here(e->ips, kMaxFrames);
  publish();
}

void early_free(const void* block, std::size_t size, AllocFn fn) {
  if (detail::thread_is_internal()) return;
  EarlyEvent* e = claim();
  if (e == nullptr) return;
  *e = EarlyEvent{
      reinterpret_cast<std::uintptr_t>(block), size, 0, nullptr, EventKind::free, fn, 0, {}};
  publish();
}

std::size_t close_early_events(bool record) {
  g_early_open.store(false, std::memory_order_relaxed);
  std::size_t n = g_claimed.load(std::memory_order_acquire);
  if (n > kMaxEvents) n = kMaxEvents;
  // A thread that claimed a slot just before the close finishes it first.
  while (g_written.load(std::memory_order_acquire) < n) {
  }
  if (!record) return 0;
  NotTheProgramsBlocks not_the_programs;
  for (std::size_t i = 0; i < n; ++i) {
    const EarlyEvent& early = g_events[i];
    bool alloc = early.kind == EventKind::alloc;
    if (alloc ? not_the_programs.allocated(early) : not_the_programs.freed(early)) continue;
    Event e;
    e.kind = early.kind;
    e.pool = g_heap_pool;
    e.address = early.address;
    e.size = early.size;
    e.requested = early.kind == EventKind::alloc ? early.size : 0;
    e.detail = static_cast<std::uint8_t>(early.fn);
    e.aux = early.alignment;
    detail::record_with_frames(e, early.ips, early.frames);
    auto* block = reinterpret_cast<const void*>(early.address);
    if (early.kind == EventKind::free)
      linker_block_erase(block);
    else if (linker_caller(early.caller))
      linker_block_insert(block);
  }
  return g_dropped.load(std::memory_order_relaxed);
}

}  // namespace memtrail::preload
