// Routing the tracer's own modules' heap calls to our interposers
// (tracer_heap.hpp).
#include "tracer_heap.hpp"

#include "got_patch.hpp"
#include "own_dependencies.hpp"

namespace memtrail::preload {

bool g_own_heap_routed = false;

namespace {

const OwnDependencies* g_deps = nullptr;

bool is_own_module(std::uint64_t address) {
  return g_deps->in_tracer(address) || g_deps->only_ours(address);
}

}  // namespace

int route_own_modules_to_interposers() {
  static const OwnDependencies deps;  // the modules loaded now
  g_deps = &deps;
  int routed = route_modules_to_interposers(&is_own_module);
  g_own_heap_routed = true;
  return routed;
}

}  // namespace memtrail::preload
