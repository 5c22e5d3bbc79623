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

 private:
  using MemGetInfo = CUresult (*)(size_t*, size_t*);
  MemGetInfo mem_get_info_ = nullptr;
};

}  // namespace memtrail::cupti
