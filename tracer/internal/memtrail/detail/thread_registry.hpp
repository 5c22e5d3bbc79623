// The threads that recorded events, with their stacks' extents: roots of the
// preload's exit-time reachability scan. Not installed.
#pragma once

#include <pthread.h>

#include <cstdint>
#include <vector>

namespace memtrail::detail {

struct ThreadRecord {
  std::uint32_t id = 0;          // thread table id
  std::uint64_t tid = 0;         // OS thread id
  std::uintptr_t stack_low = 0;  // [stack_low, stack_high) from pthread_getattr_np
  std::uintptr_t stack_high = 0;
  std::uintptr_t thread_pointer = 0;  // __builtin_thread_pointer() of that thread (its TCB/TLS)
  bool exited = false;
};

// Every thread that recorded at least one event since start (or since the
// fork that created this process), with exited ones marked; one the writer
// has retired (exited, its last event written) may be left out.
std::vector<ThreadRecord> thread_registry();

// Around the program's pthread_getattr_np on its own thread (the preload's
// interposer): glibc holds the thread's lock meanwhile, so a thread
// registered inside takes its stack extent from `answer` (nullptr when the
// call failed) instead of asking glibc again (thread_stack.cpp).
void begin_own_stack_query() noexcept;
void end_own_stack_query(const pthread_attr_t* answer) noexcept;

}  // namespace memtrail::detail
