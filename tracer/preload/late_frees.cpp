#include "late_frees.hpp"

#include "memtrail/detail/address_set.hpp"
#include "memtrail/detail/recording.hpp"
#include "memtrail/detail/reentrancy.hpp"
#include "preload_state.hpp"

namespace memtrail::preload {
namespace {

// A few per ending thread: the stacks it evicts and its keys' data.
detail::AddressSet<1 << 12> g_late;

void record_free(std::uint64_t address) {
  Event e;
  e.kind = EventKind::free;
  e.pool = g_heap_pool;
  e.address = address;
  detail::record_unwalked_past_guard(e);
}

}  // namespace

void remember_late_free(const void* block) {
  // Full (thousands of threads ending at once): the free goes unrecorded.
  (void)g_late.insert(reinterpret_cast<std::uintptr_t>(block));
}

bool late_frees_pending() {
  return !g_late.empty();
}

void settle_late_free_slow(const void* block) {
  // An exited or internal thread records nothing: the free stays pending.
  if (detail::thread_is_internal()) return;
  if (g_late.take(reinterpret_cast<std::uintptr_t>(block)))
    record_free(reinterpret_cast<std::uintptr_t>(block));
}

bool settle_late_free_at_exit(std::uint64_t address) {
  if (g_late.empty() || !g_late.take(address)) return false;
  record_free(address);
  return true;
}

}  // namespace memtrail::preload
