// libunwind's GOT slots (libunwind_slots.hpp).
#include "libunwind_slots.hpp"

#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>

#include <cstdint>

#include "got_patch.hpp"

namespace memtrail::preload {

namespace {

void* g_libunwind_base = nullptr;

bool in_libunwind(std::uint64_t address) {
  Dl_info info;
  return dladdr(reinterpret_cast<void*>(address), &info) != 0 && info.dli_fbase == g_libunwind_base;
}

}  // namespace

int route_libunwinds_slots(const char* const* names, void* const* targets, int count) {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&unw_backtrace), &info) == 0) return 0;
  g_libunwind_base = info.dli_fbase;
  return route_named_slots(&in_libunwind, names, targets, count);
}

}  // namespace memtrail::preload
