// The C API (memtrail/c_api.h): marks, named scopes, loop iterations and
// the pause switch, as extern "C" functions of libmemtrail.so, so that a
// Python program (ctypes), a C program or any FFI reaches them by name.
// Each is one branch when not tracing.
#include "memtrail/c_api.h"

#include <mutex>
#include <string>
#include <unordered_map>

#include "memtrail/detail/pause.hpp"
#include "memtrail/detail/reentrancy.hpp"
#include "memtrail/recorder.hpp"

namespace memtrail::detail {
std::atomic<int> g_pause_depth{0};
}  // namespace memtrail::detail

namespace {

using memtrail::Event;
using memtrail::EventKind;
using memtrail::MarkDetail;

// Scope ids by name: every memtrail_scope_begin("epoch") is the same scope.
std::uint32_t scope_named(const char* name) {
  memtrail::detail::ScopedInternal guard;     // the map's nodes are not the program's
  static std::mutex* mutex = new std::mutex;  // never destroyed: used at exit
  static auto* ids = new std::unordered_map<std::string, std::uint32_t>;
  std::lock_guard lock(*mutex);
  auto [it, inserted] = ids->try_emplace(name, 0);
  if (inserted) it->second = memtrail::register_scope(name, memtrail::ScopeKind::user, 0);
  return it->second;
}

// A mark of `detail` with `text` and `size`, its stack the caller's.
void record_mark_of(MarkDetail detail, const char* text, std::uint64_t size = 0) {
  if (memtrail::detail::thread_is_internal()) return;
  Event e;
  e.kind = EventKind::mark;
  e.detail = static_cast<std::uint8_t>(detail);
  e.aux = text ? memtrail::intern_string(text) : 0;
  e.size = size;
  memtrail::detail::record_slow(e, 0);
}

}  // namespace

extern "C" {

int memtrail_api_version(void) {
  return 1;
}

int memtrail_tracing(void) {
  return memtrail::tracing() ? 1 : 0;
}

void memtrail_mark(const char* text) {
  if (!memtrail::tracing() || !text) return;
  record_mark_of(MarkDetail::user, text);
}

void memtrail_scope_begin(const char* name) {
  if (!memtrail::tracing() || !name) return;
  memtrail::record_scope_begin(scope_named(name));
}

void memtrail_scope_end(const char* name) {
  if (!memtrail::tracing() || !name) return;
  memtrail::record_scope_end(scope_named(name));
}

void memtrail_iteration_begin(const char* loop) {
  if (!memtrail::tracing() || !loop) return;
  record_mark_of(MarkDetail::iteration_begin, loop);
}

void memtrail_iteration_end(const char* loop) {
  if (!memtrail::tracing() || !loop) return;
  record_mark_of(MarkDetail::iteration_end, loop);
}

void memtrail_pause(void) {
  if (!memtrail::tracing()) return;
  int depth = memtrail::detail::g_pause_depth.fetch_add(1) + 1;
  record_mark_of(MarkDetail::pause, "pause", static_cast<std::uint64_t>(depth));
}

void memtrail_resume(void) {
  if (!memtrail::tracing()) return;
  int depth = memtrail::detail::g_pause_depth.load();
  // A resume without a pause does nothing (the depth never goes negative).
  while (depth > 0 && !memtrail::detail::g_pause_depth.compare_exchange_weak(depth, depth - 1)) {
  }
  if (depth > 0)
    record_mark_of(MarkDetail::resume, "resume", static_cast<std::uint64_t>(depth - 1));
}

}  // extern "C"
