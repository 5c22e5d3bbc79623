// Page-locked host memory: cuMemAllocHost, cuMemHostAlloc, cuMemFreeHost.
#include "cuda_call.hpp"

namespace memtrail::cupti {
namespace {

std::uint64_t address_of(void* const* pp) {
  return reinterpret_cast<std::uintptr_t>(*pp);
}

}  // namespace

bool decode_pinned(CUpti_CallbackId cbid, const void* params, bool exit, CudaCall* out) {
  *out = CudaCall{};
  out->family = Family::pinned;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2: {
      auto* p = static_cast<const cuMemAllocHost_v2_params*>(params);
      if (exit) *out = {CallOp::alloc, Family::pinned, address_of(p->pp), p->bytesize, p->bytesize};
      return true;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost: {
      auto* p = static_cast<const cuMemAllocHost_params*>(params);
      if (exit) *out = {CallOp::alloc, Family::pinned, address_of(p->pp), p->bytesize, p->bytesize};
      return true;
    }
    // cuMemHostAlloc_v2 (271) has a callback id but no params struct: the
    // driver reports cuMemHostAlloc (39) for it.
    case CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc: {
      auto* p = static_cast<const cuMemHostAlloc_params*>(params);
      if (exit) *out = {CallOp::alloc, Family::pinned, address_of(p->pp), p->bytesize, p->bytesize};
      return true;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost: {
      auto* p = static_cast<const cuMemFreeHost_params*>(params);
      if (!exit) *out = {CallOp::free, Family::pinned, reinterpret_cast<std::uintptr_t>(p->p)};
      return true;
    }
    default:
      return false;
  }
}

}  // namespace memtrail::cupti
