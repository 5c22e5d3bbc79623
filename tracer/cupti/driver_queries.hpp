// The production DeviceQueries: CUPTI's id lookups, and cuMemGetInfo from the
// libcuda the driver already loaded (looked up at run time: linking libcuda,
// even its stub, would stop the program from starting without a driver).
#pragma once

#include "cuda_tracker.hpp"

namespace memtrail::cupti {

class DriverQueries final : public DeviceQueries {
 public:
  DriverQueries();
  int device_of(CUcontext context) override;
  std::uint32_t stream_id(CUcontext context, CUstream stream, bool per_thread) override;
  bool memory_info(std::uint64_t* free, std::uint64_t* total) override;
  bool pool_reserved(int device, CUmemoryPool pool, std::uint64_t* bytes) override;

 private:
  using MemGetInfo = CUresult (*)(size_t*, size_t*);
  using DeviceGet = CUresult (*)(CUdevice*, int);
  using DeviceGetMemPool = CUresult (*)(CUmemoryPool*, CUdevice);
  using MemPoolGetAttribute = CUresult (*)(CUmemoryPool, CUmemPool_attribute, void*);
  MemGetInfo mem_get_info_ = nullptr;
  DeviceGet device_get_ = nullptr;
  DeviceGetMemPool device_get_mem_pool_ = nullptr;
  MemPoolGetAttribute mem_pool_get_attribute_ = nullptr;
};

}  // namespace memtrail::cupti
