// The address of each inline forwarder is that of the one copy the program
// links (vague linkage); taking it costs an optimized build one unused copy.
#include "pmr_forwarders.hpp"

#include <memory_resource>

#include "memtrail/recorder.hpp"

namespace memtrail::alloc {

void register_pmr_forwarders() {
#if defined(__GNUC__) && !defined(__clang__)  // GCC's bound-member-function extension
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpmf-conversions"
  using Allocate = void* (*)(std::pmr::memory_resource*, std::size_t, std::size_t);
  using Deallocate = void (*)(std::pmr::memory_resource*, void*, std::size_t, std::size_t);
  static const bool registered = [] {
    detail::add_forwarder(
        reinterpret_cast<const void*>((Allocate)(&std::pmr::memory_resource::allocate)));
    detail::add_forwarder(
        reinterpret_cast<const void*>((Deallocate)(&std::pmr::memory_resource::deallocate)));
    return true;
  }();
  (void)registered;
#pragma GCC diagnostic pop
#endif
}

}  // namespace memtrail::alloc
