// `memtrail attach`: once loaded into a running process (by gdb's dlopen),
// this library's malloc and operator new interposers are not what the
// program calls: symbols were bound at start-up. So, as heaptrack_inject
// does, the GOT slots (JUMP_SLOT and GLOB_DAT relocations) that name an
// allocation function in every loaded module are rewritten to point at our
// interposers, and written back on detach.
//
// Left alone: this library (its own calls must reach the real allocator),
// ld.so (its allocations go through pointers, not the GOT) and the vDSO.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memtrail::preload {

// Points every matching GOT slot of the loaded modules at our interposers
// (slots already pointing there are left as they are, so a second call
// patches only modules loaded since). Returns the number of slots written,
// or -1 when the interposers could not be found.
int patch_allocation_slots();

// Points the heap-function slots (malloc family, operator new / delete; not
// mmap) of the modules `wanted` names (by an address inside each) at our
// interposers, for good: tracer_heap.hpp. Returns the slots written, or -1.
int route_modules_to_interposers(bool (*wanted)(std::uint64_t address));

// Points the slots naming names[i] in the modules `wanted` names at
// targets[i], for good. Returns the slots written.
int route_named_slots(bool (*wanted)(std::uint64_t address), const char* const* names,
                      void* const* targets, int count);

// Writes back every slot patch_allocation_slots() changed that is still
// mapped and still holds our interposer. Returns how many.
int restore_allocation_slots();

// dl_iterate_phdr's count of modules loaded so far: when it changes, a
// dlopen happened and patch_allocation_slots() has new slots to patch.
int module_generation();

}  // namespace memtrail::preload
