// Virtual memory management: cuMemCreate / cuMemRelease (physical memory,
// named by a handle) and cuMemMap / cuMemUnmap (address ranges backed by it).
#include "cuda_call.hpp"

namespace memtrail::cupti {

bool decode_vmm(CUpti_CallbackId cbid, const void* params, bool exit, CudaCall* out) {
  *out = CudaCall{};
  out->family = Family::vmm;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuMemCreate: {
      auto* p = static_cast<const cuMemCreate_params*>(params);
      if (!exit) return true;
      *out = {CallOp::create, Family::vmm, 0, p->size, p->size, *p->handle};
      if (p->prop && p->prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE)
        out->device = p->prop->location.id;
      return true;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemRelease: {
      auto* p = static_cast<const cuMemRelease_params*>(params);
      if (!exit) *out = {CallOp::release, Family::vmm, 0, 0, 0, p->handle};
      return true;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemMap: {
      auto* p = static_cast<const cuMemMap_params*>(params);
      if (exit) *out = {CallOp::map, Family::vmm, p->ptr, p->size, p->size, p->handle};
      return true;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuMemUnmap: {
      auto* p = static_cast<const cuMemUnmap_params*>(params);
      if (!exit) *out = {CallOp::unmap, Family::vmm, p->ptr, p->size, p->size};
      return true;
    }
    default:
      return false;
  }
}

bool decode_call(CUpti_CallbackId cbid, const void* params, bool exit, CudaCall* out) {
  return decode_device(cbid, params, exit, out) || decode_pinned(cbid, params, exit, out) ||
         decode_managed(cbid, params, exit, out) || decode_async(cbid, params, exit, out) ||
         decode_vmm(cbid, params, exit, out);
}

const CUpti_CallbackId kDriverMemoryCallbacks[] = {
    CUPTI_DRIVER_TRACE_CBID_cuMemAlloc,
    CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemFree,
    CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc,
    CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemCreate,
    CUPTI_DRIVER_TRACE_CBID_cuMemRelease,
    CUPTI_DRIVER_TRACE_CBID_cuMemMap,
    CUPTI_DRIVER_TRACE_CBID_cuMemUnmap,
};
const int kDriverMemoryCallbackCount =
    static_cast<int>(sizeof kDriverMemoryCallbacks / sizeof kDriverMemoryCallbacks[0]);

}  // namespace memtrail::cupti
