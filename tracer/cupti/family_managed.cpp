// Managed (unified) memory: cuMemAllocManaged. It is freed with cuMemFree,
// which the device family decodes; the tracker knows the block's pool.
#include "cuda_call.hpp"

namespace memtrail::cupti {

bool decode_managed(CUpti_CallbackId cbid, const void* params, bool exit, CudaCall* out) {
  *out = CudaCall{};
  out->family = Family::managed;
  if (cbid != CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged) return false;
  auto* p = static_cast<const cuMemAllocManaged_params*>(params);
  if (exit) *out = {CallOp::alloc, Family::managed, *p->dptr, p->bytesize, p->bytesize};
  return true;
}

}  // namespace memtrail::cupti
