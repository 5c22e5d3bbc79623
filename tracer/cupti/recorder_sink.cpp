// RecorderSink: see recorder_sink.hpp.
#include "recorder_sink.hpp"

#include <dlfcn.h>

#include <cstring>
#include <optional>

#include "memtrail/detail/recording.hpp"
#include "memtrail/detail/reentrancy.hpp"
#include "memtrail/recorder.hpp"

namespace memtrail::cupti {
namespace {

bool is_machinery_module(const char* path) {
  if (path == nullptr) return false;
  const char* base = std::strrchr(path, '/');
  base = base ? base + 1 : path;
  for (const char* prefix : {"libcuda.", "libcupti.", "libcudart.", "libmemtrail_cupti."})
    if (std::strncmp(base, prefix, std::strlen(prefix)) == 0) return true;
  return false;
}

thread_local int t_internal_depth = 0;
thread_local std::optional<detail::ScopedInternal> t_internal;

}  // namespace

int machinery_frames(const std::uint64_t* ips, int n) {
  int k = 0;
  for (; k < n; ++k) {
    Dl_info info;
    // ip - 1: a return address may point just past its function.
    if (dladdr(reinterpret_cast<void*>(ips[k] - 1), &info) == 0 ||
        !is_machinery_module(info.dli_fname))
      break;
  }
  return k;
}

std::uint32_t RecorderSink::register_pool(const PoolInfo& info) {
  return memtrail::register_pool(info);
}

std::uint32_t RecorderSink::intern_string(const std::string& text) {
  return memtrail::intern_string(text);
}

void RecorderSink::record_with_stack(const Event& e) {
  constexpr int kMaxFrames = 320;  // room for the CUDA frames above the program's 256
  std::uint64_t ips[kMaxFrames];
  int n = detail::backtrace_here(ips, kMaxFrames);
  int skip = machinery_frames(ips, n);
  detail::record_with_frames(e, ips + skip, n - skip);
}

void RecorderSink::record_plain(const Event& e) {
  if (e.kind == EventKind::reachability)
    detail::record_unwalked_past_guard(e);
  else
    detail::record_unwalked(e);
}

void RecorderSink::flush() {
  detail::flush_all_threads();
}

void RecorderSink::enter_internal() {
  if (t_internal_depth++ == 0) t_internal.emplace();
}

void RecorderSink::leave_internal() {
  if (--t_internal_depth == 0) t_internal.reset();
}

}  // namespace memtrail::cupti
