// The tracer's own libunwind (libunwind.so.8, the module that holds
// unw_backtrace) makes a few libc calls the program would notice: a pthread
// key (unwind_keys.cpp), a validation pipe (unwind_validation.cpp). Those
// calls go through libunwind's GOT, so pointing its slots alone at the
// tracer's answers changes nothing for the program's own calls.
#pragma once

namespace memtrail::preload {

// Points the slots naming names[i] in libunwind's GOT at targets[i], for
// good. Returns the slots written (0 if libunwind cannot be found).
int route_libunwinds_slots(const char* const* names, void* const* targets, int count);

}  // namespace memtrail::preload
