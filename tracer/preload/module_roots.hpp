// The loaded modules' writable segments (.data, .bss, GOT: roots of the
// exit-time leak scan), read while the program's threads are stopped.
//
// dl_iterate_phdr takes the dynamic linker's lock, which a stopped thread
// may hold (inside a dl_iterate_phdr callback of its own: the unwinder of a
// C++ exception, a plugin loader): the scan would wait forever, or, with the
// threads running, wait while they free the blocks it is about to classify.
// So the modules are read from the linker's list (_r_debug.r_map) without
// the lock, every word through a MemoryReader: a list a stopped dlopen left
// half-updated can only lose a module, never fault the scan.
#pragma once

#include <vector>

#include "image_constants.hpp"
#include "reachability.hpp"

namespace memtrail::preload {

// Finds the tracer's own modules (this library and the recorder's) and their
// static TLS. Call once at start-up, with dl_iterate_phdr still safe to call.
void remember_own_modules();

struct ModuleRoots {
  std::vector<MemoryRange> writable;  // every module's writable PT_LOAD segments
  std::vector<MemoryRange> own;       // ours (their buffers hold copies of block addresses)
  // Our static TLS as offsets from any thread's pointer (the same in all).
  std::vector<MemoryRange> own_tls;
  // What the writable segments' files initialise, and where those files are
  // (their constants are no pointers: image_constants.hpp).
  std::vector<ImageSegment> images;
};

// Takes no lock and allocates only from the caller's heap.
ModuleRoots module_roots(MemoryReader& reader);

}  // namespace memtrail::preload
