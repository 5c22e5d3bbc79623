// std::pmr's inline forwarders to the pools' entry points, for the recorder.
#pragma once

namespace memtrail::alloc {

// Registers std::pmr::memory_resource::allocate and deallocate with the
// recorder (detail::add_forwarder), once per process: in a program built at
// -O0 they stay out of line between the user's call and do_allocate, whose
// MEMTRAIL_ALLOCATOR_ENTRY would otherwise make them the innermost frame of
// every pool event. Called by the pools' constructors.
void register_pmr_forwarders();

}  // namespace memtrail::alloc
