// DriverQueries: see driver_queries.hpp.
#include "driver_queries.hpp"

#include <dlfcn.h>

namespace memtrail::cupti {

DriverQueries::DriverQueries() {
  // RTLD_NOLOAD: only the libcuda the program's runtime already loaded.
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (cuda == nullptr) return;
  mem_get_info_ = reinterpret_cast<MemGetInfo>(dlsym(cuda, "cuMemGetInfo_v2"));
  device_get_ = reinterpret_cast<DeviceGet>(dlsym(cuda, "cuDeviceGet"));
  device_get_mem_pool_ = reinterpret_cast<DeviceGetMemPool>(dlsym(cuda, "cuDeviceGetMemPool"));
  mem_pool_get_attribute_ =
      reinterpret_cast<MemPoolGetAttribute>(dlsym(cuda, "cuMemPoolGetAttribute"));
}

int DriverQueries::device_of(CUcontext context) {
  std::uint32_t id = 0;
  if (context == nullptr || cuptiGetDeviceId(context, &id) != CUPTI_SUCCESS) return -1;
  return static_cast<int>(id);
}

std::uint32_t DriverQueries::stream_id(CUcontext context, CUstream stream, bool per_thread) {
  std::uint32_t id = 0;
  if (cuptiGetStreamIdEx(context, stream, per_thread ? 1 : 0, &id) != CUPTI_SUCCESS) return 0;
  return id;
}

bool DriverQueries::memory_info(std::uint64_t* free, std::uint64_t* total) {
  size_t f = 0, t = 0;
  if (mem_get_info_ == nullptr || mem_get_info_(&f, &t) != CUDA_SUCCESS) return false;
  *free = f;
  *total = t;
  return true;
}

bool DriverQueries::pool_reserved(int device, CUmemoryPool pool, std::uint64_t* bytes) {
  if (mem_pool_get_attribute_ == nullptr) return false;
  if (pool == nullptr) {  // cuMemAllocAsync: the device's current pool
    CUdevice dev = 0;
    if (device < 0 || device_get_ == nullptr || device_get_mem_pool_ == nullptr ||
        device_get_(&dev, device) != CUDA_SUCCESS ||
        device_get_mem_pool_(&pool, dev) != CUDA_SUCCESS)
      return false;
  }
  cuuint64_t value = 0;
  if (mem_pool_get_attribute_(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &value) != CUDA_SUCCESS)
    return false;
  *bytes = value;
  return true;
}

}  // namespace memtrail::cupti
