// The recorder's reentrancy guard, for this project's tracer libraries (the
// preload tracer, the CUPTI injection, memtrail_gtest). Not installed.
//
// Rules for code that runs inside malloc:
//   * record_slow() never calls malloc/new and takes no lock on its hot path;
//     the first event of a thread registers it (that may allocate, under the
//     thread's reentrancy guard, so nested mallocs are dropped, not traced).
//   * Anything the interposer does that may allocate must run inside a
//     ScopedInternal guard; events produced under it are dropped.
#pragma once

namespace memtrail::detail {

// While alive, events recorded by the current thread are dropped. Nests.
class ScopedInternal {
 public:
  ScopedInternal() noexcept;
  ~ScopedInternal();
  ScopedInternal(const ScopedInternal&) = delete;
  ScopedInternal& operator=(const ScopedInternal&) = delete;
};

// True inside a ScopedInternal guard, inside the recorder itself, and on the
// recorder's own threads (writer, sampler), which are never traced.
bool thread_is_internal() noexcept;

}  // namespace memtrail::detail
