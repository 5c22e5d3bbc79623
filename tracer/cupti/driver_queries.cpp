// DriverQueries: see driver_queries.hpp.
#include "driver_queries.hpp"

#include <dlfcn.h>

namespace memtrail::cupti {

DriverQueries::DriverQueries() {
  // RTLD_NOLOAD: only the libcuda the program's runtime already loaded.
  if (void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD))
    mem_get_info_ = reinterpret_cast<MemGetInfo>(dlsym(cuda, "cuMemGetInfo_v2"));
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

}  // namespace memtrail::cupti
