#include "early_events.hpp"
#include "unwind_keys.hpp"

#include <dlfcn.h>

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#include "linker_blocks.hpp"
#include "memtrail/detail/own_mappings.hpp"
#include "memtrail/detail/recording.hpp"
#include "memtrail/detail/reentrancy.hpp"
#include "own_dependencies.hpp"
#include "preload_state.hpp"
#include "unwind_keys.hpp"
#include "unwind_validation.hpp"

namespace memtrail::preload {

std::atomic<bool> g_early_open{true};

namespace {

// Start-up allocations are few (a C++ program: ~10; python3: ~100), so the
// first 4096 events fit in static storage (touched only as used); a
// constructor that churns gets more chunks from mmap, up to 1M events with
// their stacks (~300 MB at most). Past that (libtorch's operator registry
// makes ~1.4M) events are kept without stacks, 40 bytes each, up to 16M
// more: an event without its stack beats one lost.
constexpr std::size_t kChunkEvents = 4096;
constexpr std::size_t kMaxChunks = 256;
constexpr std::size_t kStackedEvents = kChunkEvents * kMaxChunks;
constexpr std::size_t kCompactChunkEvents = 65536;
constexpr std::size_t kMaxCompactChunks = 256;
constexpr int kMaxFrames = 32;

struct EarlyEvent {
  std::uint64_t address, size, alignment;
  const void* caller;  // return address of the interposer: ld.so's or not
  EventKind kind;
  AllocFn fn;
  int frames;
  bool valid;  // written (a slot whose chunk could not be mapped stays 0)
  std::uint64_t ips[kMaxFrames];
};
constexpr std::size_t kChunkBytes = kChunkEvents * sizeof(EarlyEvent);

// An event past the stacked buffer: no frames.
struct CompactEvent {
  std::uint64_t address, size, alignment;
  const void* caller;
  EventKind kind;
  AllocFn fn;
  bool valid;
};
constexpr std::size_t kCompactChunkBytes = kCompactChunkEvents * sizeof(CompactEvent);
std::atomic<CompactEvent*> g_compact[kMaxCompactChunks] = {};

EarlyEvent g_first_chunk[kChunkEvents];
std::atomic<EarlyEvent*> g_chunks[kMaxChunks] = {g_first_chunk};
std::atomic<std::size_t> g_claimed{0};  // slots handed out
std::atomic<std::size_t> g_written{0};  // slots filled (published)
std::atomic<std::size_t> g_dropped{0};

// Straight system calls: our mmap interposer must not see these.
void* map_chunk(std::size_t bytes = kChunkBytes) {
  long m =
      syscall(SYS_mmap, nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m < 0 && m > -4096) return nullptr;
  detail::note_own_mapped(reinterpret_cast<void*>(m), bytes, detail::OwnPurpose::other);
  return reinterpret_cast<void*>(m);
}
void unmap_chunk(void* chunk, std::size_t bytes = kChunkBytes) {
  detail::note_own_unmapped(chunk, bytes);
  syscall(SYS_munmap, chunk, bytes);
}
// After the close: the pages go, the mapping stays, so a thread that
// claimed a slot just as the buffer closed writes into zero pages, not
// into unmapped memory.
void release_chunk(void* chunk, std::size_t bytes = kChunkBytes) {
  syscall(SYS_madvise, chunk, bytes, MADV_DONTNEED);
}

// Slot i - kStackedEvents of the compact chunks (mapped on first use).
CompactEvent* compact_slot(std::size_t i) {
  std::size_t c = i / kCompactChunkEvents;
  if (c >= kMaxCompactChunks) return nullptr;
  CompactEvent* chunk = g_compact[c].load(std::memory_order_acquire);
  if (chunk == nullptr) {
    auto* mapped = static_cast<CompactEvent*>(map_chunk(kCompactChunkBytes));
    if (mapped == nullptr) return nullptr;
    if (g_compact[c].compare_exchange_strong(chunk, mapped, std::memory_order_acq_rel))
      chunk = mapped;
    else
      unmap_chunk(mapped, kCompactChunkBytes);
  }
  return chunk + i % kCompactChunkEvents;
}

EarlyEvent* slot(std::size_t i) {
  std::size_t c = i / kChunkEvents;
  if (c >= kMaxChunks) return nullptr;
  EarlyEvent* chunk = g_chunks[c].load(std::memory_order_acquire);
  if (chunk == nullptr) {
    auto* mapped = static_cast<EarlyEvent*>(map_chunk());
    if (mapped == nullptr) return nullptr;
    if (g_chunks[c].compare_exchange_strong(chunk, mapped, std::memory_order_acq_rel))
      chunk = mapped;
    else
      unmap_chunk(mapped);  // another thread mapped it first
  }
  return chunk + i % kChunkEvents;
}

// Every claimed slot is published, written or dropped, so that the close
// can wait for the ones still being written.
void publish() {
  g_written.fetch_add(1, std::memory_order_release);
}

// A slot with room for a stack, or (past the stacked buffer) a compact
// one; both null when even that is full (the event is counted as dropped).
struct Claimed {
  EarlyEvent* stacked = nullptr;
  CompactEvent* compact = nullptr;
};
Claimed claim() {
  std::size_t i = g_claimed.fetch_add(1, std::memory_order_relaxed);
  Claimed c;
  if (i < kStackedEvents)
    c.stacked = slot(i);
  else
    c.compact = compact_slot(i - kStackedEvents);
  if (c.stacked == nullptr && c.compact == nullptr) {
    g_dropped.fetch_add(1, std::memory_order_relaxed);
    publish();
  }
  return c;
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
  Claimed c = claim();
  if (c.compact != nullptr) {
    *c.compact = CompactEvent{reinterpret_cast<std::uintptr_t>(block),
                              requested,
                              alignment,
                              caller,
                              EventKind::alloc,
                              fn,
                              true};
    publish();
    return;
  }
  EarlyEvent* e = c.stacked;
  if (e == nullptr) return;
  *e = EarlyEvent{reinterpret_cast<std::uintptr_t>(block),
                  requested,
                  alignment,
                  caller,
                  EventKind::alloc,
                  fn,
                  0,
                  true,
                  {}};
  // Before the first unwind creates libunwind's pthread key (unwind_keys.hpp)
  // and opens its validation pipe (unwind_validation.hpp).
  static std::atomic<bool> key_emulated{false};
  if (!key_emulated.exchange(true)) {
    detail::ScopedInternal internal;
    emulate_libunwinds_key();
    answer_libunwinds_validation();
  }
  e->frames = detail::backtrace_here(e->ips, kMaxFrames);
  publish();
}

void early_free(const void* block, std::size_t size, AllocFn fn) {
  if (detail::thread_is_internal()) return;
  Claimed c = claim();
  if (c.compact != nullptr) {
    *c.compact = CompactEvent{
        reinterpret_cast<std::uintptr_t>(block), size, 0, nullptr, EventKind::free, fn, true};
    publish();
    return;
  }
  EarlyEvent* e = c.stacked;
  if (e == nullptr) return;
  *e = EarlyEvent{
      reinterpret_cast<std::uintptr_t>(block), size, 0, nullptr, EventKind::free, fn, 0, true, {}};
  publish();
}

namespace {

// libstdc++ allocates at start-up only what its __gnu_cxx::__freeres gives
// back at exit (the 72,704-byte emergency exception pool): the runtime's.
bool libstdcxx_caller(const void* caller) {
  Dl_info info;
  if (caller == nullptr || dladdr(caller, &info) == 0 || info.dli_fname == nullptr) return false;
  const char* slash = std::strrchr(info.dli_fname, '/');
  return std::strncmp(slash ? slash + 1 : info.dli_fname, "libstdc++.so", 12) == 0;
}

void record_early(const EarlyEvent& early) {
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
  else if (linker_caller(early.caller) || libstdcxx_caller(early.caller))
    linker_block_insert(block);
}

}  // namespace

std::size_t close_early_events(bool record) {
  g_early_open.store(false, std::memory_order_relaxed);
  std::size_t n = g_claimed.load(std::memory_order_acquire);
  // A thread that claimed a slot just before the close finishes it first.
  while (g_written.load(std::memory_order_acquire) < n) {
  }
  NotTheProgramsBlocks not_the_programs;
  auto record_one = [&](const EarlyEvent& early) {
    if (!early.valid) return;
    bool alloc = early.kind == EventKind::alloc;
    if (alloc ? not_the_programs.allocated(early) : not_the_programs.freed(early)) return;
    record_early(early);
  };
  for (std::size_t i = 0; record && i < n && i < kStackedEvents; ++i) {
    EarlyEvent* chunk = g_chunks[i / kChunkEvents].load(std::memory_order_acquire);
    if (chunk != nullptr) record_one(chunk[i % kChunkEvents]);
  }
  for (std::size_t i = kStackedEvents; record && i < n; ++i) {
    std::size_t k = i - kStackedEvents;
    if (k / kCompactChunkEvents >= kMaxCompactChunks) break;
    CompactEvent* chunk = g_compact[k / kCompactChunkEvents].load(std::memory_order_acquire);
    if (chunk == nullptr) continue;
    const CompactEvent& c = chunk[k % kCompactChunkEvents];
    EarlyEvent early{c.address, c.size, c.alignment, c.caller, c.kind, c.fn, 0, c.valid, {}};
    record_one(early);
  }
  for (std::size_t c = 1; c < kMaxChunks; ++c)
    if (EarlyEvent* chunk = g_chunks[c].load(std::memory_order_acquire)) release_chunk(chunk);
  for (std::size_t c = 0; c < kMaxCompactChunks; ++c)
    if (CompactEvent* chunk = g_compact[c].load(std::memory_order_acquire))
      release_chunk(chunk, kCompactChunkBytes);
  return record ? g_dropped.load(std::memory_order_relaxed) : 0;
}

}  // namespace memtrail::preload
