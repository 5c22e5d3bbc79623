// One CUDA driver API memory call, decoded from its CUPTI parameter struct
// (cupti.h's generated cu*_params) into what the tracker needs. One decoder
// per allocation family (family_*.cpp); each is a pure function, so tests
// feed them hand-filled real parameter structs without CUPTI running.
#pragma once

#include <cupti.h>

#include <cstdint>

namespace memtrail::cupti {

enum class Family : std::uint8_t { device, pinned, managed, async, vmm };

enum class CallOp : std::uint8_t {
  none,
  alloc,    // a block now exists at address (read at API exit)
  free,     // the block at address goes away (read at API enter)
  create,   // VMM physical allocation: handle, size
  release,  // VMM physical allocation released: handle
  map,      // VMM: [address, address + size) mapped to handle
  unmap,    // VMM: [address, address + size) unmapped
};

struct CudaCall {
  CallOp op = CallOp::none;
  Family family = Family::device;
  std::uint64_t address = 0;
  std::uint64_t size = 0;           // bytes granted (pitch * height for pitched memory)
  std::uint64_t requested = 0;      // bytes asked for (width * height for pitched memory)
  std::uint64_t handle = 0;         // VMM generic allocation handle
  CUstream stream = nullptr;        // stream-ordered calls
  CUmemoryPool mem_pool = nullptr;  // cuMemAllocFromPoolAsync's pool (null: the device's)
  bool per_thread_stream = false;
  int device = -1;  // VMM: the device named in CUmemAllocationProp
};

// Each decoder: true when `cbid` is one of its family's calls. `exit` says
// which side of the call this is: allocations are read at exit (their output
// pointers are written then), frees at enter (before the address can be
// handed out again by another thread). A call on the other side decodes to
// CallOp::none.
bool decode_device(CUpti_CallbackId cbid, const void* params, bool exit, CudaCall* out);
bool decode_pinned(CUpti_CallbackId cbid, const void* params, bool exit, CudaCall* out);
bool decode_managed(CUpti_CallbackId cbid, const void* params, bool exit, CudaCall* out);
bool decode_async(CUpti_CallbackId cbid, const void* params, bool exit, CudaCall* out);
bool decode_vmm(CUpti_CallbackId cbid, const void* params, bool exit, CudaCall* out);

// All families in turn.
bool decode_call(CUpti_CallbackId cbid, const void* params, bool exit, CudaCall* out);

// The driver callback ids the injection subscribes to (every family).
extern const CUpti_CallbackId kDriverMemoryCallbacks[];
extern const int kDriverMemoryCallbackCount;

}  // namespace memtrail::cupti
