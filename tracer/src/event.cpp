#include "memtrail/event.hpp"

namespace memtrail {

std::string_view to_string(EventKind kind) {
  switch (kind) {
    case EventKind::alloc:
      return "alloc";
    case EventKind::free:
      return "free";
    case EventKind::reuse:
      return "reuse";
    case EventKind::segment_reserve:
      return "segment_reserve";
    case EventKind::segment_release:
      return "segment_release";
    case EventKind::scope_begin:
      return "scope_begin";
    case EventKind::scope_end:
      return "scope_end";
    case EventKind::workspace_reset:
      return "workspace_reset";
    case EventKind::workspace_learn:
      return "workspace_learn";
    case EventKind::spill:
      return "spill";
    case EventKind::donate:
      return "donate";
    case EventKind::donate_rejected:
      return "donate_rejected";
    case EventKind::oom:
      return "oom";
    case EventKind::sample:
      return "sample";
    case EventKind::mark:
      return "mark";
    case EventKind::reachability:
      return "reachability";
  }
  return "unknown";
}

std::string_view to_string(AllocFn fn) {
  switch (fn) {
    case AllocFn::unknown:
      return "unknown";
    case AllocFn::malloc:
      return "malloc";
    case AllocFn::calloc:
      return "calloc";
    case AllocFn::realloc:
      return "realloc";
    case AllocFn::aligned:
      return "aligned";
    case AllocFn::op_new:
      return "new";
    case AllocFn::op_new_array:
      return "new[]";
    case AllocFn::op_delete:
      return "delete";
    case AllocFn::op_delete_array:
      return "delete[]";
    case AllocFn::free:
      return "free";
    case AllocFn::pool:
      return "pool";
    case AllocFn::inherited:
      return "inherited";
  }
  return "unknown";
}

std::string_view to_string(LeakClass c) {
  switch (c) {
    case LeakClass::unknown:
      return "unknown";
    case LeakClass::direct:
      return "direct";
    case LeakClass::indirect:
      return "indirect";
    case LeakClass::reachable:
      return "reachable";
    case LeakClass::runtime:
      return "runtime";
    case LeakClass::possible:
      return "possible";
  }
  return "unknown";
}

std::string_view to_string(MemorySpace space) {
  switch (space) {
    case MemorySpace::host:
      return "host";
    case MemorySpace::pinned:
      return "pinned";
    case MemorySpace::device:
      return "device";
    case MemorySpace::managed:
      return "managed";
    case MemorySpace::mmap:
      return "mmap";
  }
  return "unknown";
}

std::string_view to_string(PoolKind kind) {
  switch (kind) {
    case PoolKind::heap:
      return "heap";
    case PoolKind::mmap:
      return "mmap";
    case PoolKind::system:
      return "system";
    case PoolKind::caching:
      return "caching";
    case PoolKind::bfc:
      return "bfc";
    case PoolKind::workspace:
      return "workspace";
    case PoolKind::tidy:
      return "tidy";
    case PoolKind::cuda:
      return "cuda";
    case PoolKind::other:
      return "other";
  }
  return "unknown";
}

std::string_view to_string(ScopeKind kind) {
  switch (kind) {
    case ScopeKind::user:
      return "user";
    case ScopeKind::tidy:
      return "tidy";
    case ScopeKind::workspace:
      return "workspace";
    case ScopeKind::iteration:
      return "iteration";
  }
  return "unknown";
}

}  // namespace memtrail
