// Device memory: cuMemAlloc, cuMemAllocPitch, cuMemFree (legacy 32-bit and _v2).
#include "cuda_call.hpp"

namespace memtrail::cupti {

bool decode_device(CUpti_CallbackId cbid, const void* params, bool exit, CudaCall* out) {
  *out = CudaCall{};
  out->family = Family::device;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2: {
      auto* p = static_cast<const cuMemAlloc_v2_params*>(params);
      if (exit) *out = {CallOp::alloc, Family::device, *p->dptr, p->bytesize, p->bytesize};
      return true;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc: {
      auto* p = static_cast<const cuMemAlloc_params*>(params);
      if (exit) *out = {CallOp::alloc, Family::device, *p->dptr, p->bytesize, p->bytesize};
      return true;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2: {
      auto* p = static_cast<const cuMemAllocPitch_v2_params*>(params);
      if (exit)
        *out = {CallOp::alloc, Family::device, *p->dptr, std::uint64_t{*p->pPitch} * p->Height,
                std::uint64_t{p->WidthInBytes} * p->Height};
      return true;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch: {
      auto* p = static_cast<const cuMemAllocPitch_params*>(params);
      if (exit)
        *out = {CallOp::alloc, Family::device, *p->dptr, std::uint64_t{*p->pPitch} * p->Height,
                std::uint64_t{p->WidthInBytes} * p->Height};
      return true;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2: {
      auto* p = static_cast<const cuMemFree_v2_params*>(params);
      if (!exit) *out = {CallOp::free, Family::device, p->dptr};
      return true;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemFree: {
      auto* p = static_cast<const cuMemFree_params*>(params);
      if (!exit) *out = {CallOp::free, Family::device, p->dptr};
      return true;
    }
    default:
      return false;
  }
}

}  // namespace memtrail::cupti
