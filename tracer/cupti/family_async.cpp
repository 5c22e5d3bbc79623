// Stream-ordered allocations: cuMemAllocAsync, cuMemAllocFromPoolAsync,
// cuMemFreeAsync and their per-thread-default-stream (_ptsz) variants.
#include "cuda_call.hpp"

namespace memtrail::cupti {
namespace {

template <class Params>
void async_alloc(const void* params, bool per_thread, CudaCall* out) {
  auto* p = static_cast<const Params*>(params);
  *out = {CallOp::alloc, Family::async, *p->dptr, p->bytesize, p->bytesize};
  out->stream = p->hStream;
  out->per_thread_stream = per_thread;
}

template <class Params>
void async_free(const void* params, bool per_thread, CudaCall* out) {
  auto* p = static_cast<const Params*>(params);
  *out = {CallOp::free, Family::async, p->dptr};
  out->stream = p->hStream;
  out->per_thread_stream = per_thread;
}

}  // namespace

bool decode_async(CUpti_CallbackId cbid, const void* params, bool exit, CudaCall* out) {
  *out = CudaCall{};
  out->family = Family::async;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync:
      if (exit) async_alloc<cuMemAllocAsync_params>(params, false, out);
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz:
      if (exit) async_alloc<cuMemAllocAsync_ptsz_params>(params, true, out);
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync:
      if (exit) {
        async_alloc<cuMemAllocFromPoolAsync_params>(params, false, out);
        out->mem_pool = static_cast<const cuMemAllocFromPoolAsync_params*>(params)->pool;
      }
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz:
      if (exit) {
        async_alloc<cuMemAllocFromPoolAsync_ptsz_params>(params, true, out);
        out->mem_pool = static_cast<const cuMemAllocFromPoolAsync_ptsz_params*>(params)->pool;
      }
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync:
      if (!exit) async_free<cuMemFreeAsync_params>(params, false, out);
      return true;
    case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz:
      if (!exit) async_free<cuMemFreeAsync_ptsz_params>(params, true, out);
      return true;
    default:
      return false;
  }
}

}  // namespace memtrail::cupti
