// libunwind's thread-exit key, emulated without a pthread key
// (unwind_keys.hpp).
#include "unwind_keys.hpp"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "libunwind_slots.hpp"
#include "memtrail/detail/reentrancy.hpp"

extern "C" int __cxa_thread_atexit_impl(void (*fn)(void*), void* arg, void* dso_symbol);
extern "C" void* __dso_handle;

namespace memtrail::preload {

namespace {

// Keys handed out by the emulation: above PTHREAD_KEYS_MAX, so never a real one.
constexpr pthread_key_t kFirstFakeKey = 0x7fff0000;
constexpr int kMaxFakeKeys = 4;
std::atomic<void (*)(void*)> g_destructors[kMaxFakeKeys];
std::atomic<int> g_fake_keys{0};

__thread void* t_values[kMaxFakeKeys];
__thread bool t_armed[kMaxFakeKeys];

bool is_main_thread() {
  return syscall(SYS_gettid) == getpid();
}

// At the thread's exit: the key's destructor with its value, as glibc would
// (a destructor that sets the value again is called again: libunwind does,
// to outlast the program's own destructors).
void run_destructor(void* index_as_pointer) {
  auto index = static_cast<int>(reinterpret_cast<std::uintptr_t>(index_as_pointer));
  t_armed[index] = false;
  void* value = t_values[index];
  t_values[index] = nullptr;
  void (*destructor)(void*) = g_destructors[index].load(std::memory_order_acquire);
  if (value != nullptr && destructor != nullptr) destructor(value);
}

int fake_key_create(pthread_key_t* key, void (*destructor)(void*)) {
  int index = g_fake_keys.fetch_add(1);
  if (index >= kMaxFakeKeys) return pthread_key_create(key, destructor);
  g_destructors[index].store(destructor, std::memory_order_release);
  *key = kFirstFakeKey + static_cast<pthread_key_t>(index);
  return 0;
}

int fake_setspecific(pthread_key_t key, const void* value) {
  if (key < kFirstFakeKey || key >= kFirstFakeKey + kMaxFakeKeys)
    return pthread_setspecific(key, value);
  int index = static_cast<int>(key - kFirstFakeKey);
  t_values[index] = const_cast<void*>(value);
  // The main thread's keys are never destroyed (its exit ends the process).
  if (value != nullptr && !t_armed[index] && !is_main_thread()) {
    t_armed[index] = true;
    // Its node (a calloc) is the tracer's, not the program's.
    detail::ScopedInternal internal;
    __cxa_thread_atexit_impl(&run_destructor,
                             reinterpret_cast<void*>(static_cast<std::uintptr_t>(index)),
                             &__dso_handle);
  }
  return 0;
}

}  // namespace

void emulate_libunwinds_key() {
  static const char* const kNames[] = {"pthread_key_create", "pthread_setspecific"};
  static void* const kTargets[] = {reinterpret_cast<void*>(&fake_key_create),
                                   reinterpret_cast<void*>(&fake_setspecific)};
  route_libunwinds_slots(kNames, kTargets, 2);
}

}  // namespace memtrail::preload
