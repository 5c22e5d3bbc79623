// The next definition of a function the preload interposes (RTLD_NEXT),
// looked up once and kept in `slot`. The interposers call it from a
// constructor too: a lazy dlsym on first use would clear a dlerror() the
// program has not read yet.
#pragma once

#include <dlfcn.h>

#include <atomic>

namespace memtrail::preload {

template <typename Fn>
Fn next_symbol(std::atomic<Fn>& slot, const char* name) {
  Fn fn = slot.load(std::memory_order_acquire);
  if (__builtin_expect(fn == nullptr, 0)) {
    fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
    slot.store(fn, std::memory_order_release);
  }
  return fn;
}

}  // namespace memtrail::preload
