// The production CudaSink: events go to libmemtrail.so's recorder, with the
// host stack of the thread that made the CUDA call.
#pragma once

#include "cuda_tracker.hpp"

namespace memtrail::cupti {

class RecorderSink final : public CudaSink {
 public:
  std::uint32_t register_pool(const PoolInfo& info) override;
  std::uint32_t intern_string(const std::string& text) override;
  void record_with_stack(const Event& e) override;
  void record_plain(const Event& e) override;
  void flush() override;
  void enter_internal() override;
  void leave_internal() override;
};

// How many of the leading frames ips[0..n) lie in the CUDA and CUPTI
// libraries or in this library (by the module each ip is in, not by a count:
// libcuda's depth differs between calls and versions).
int machinery_frames(const std::uint64_t* ips, int n);

}  // namespace memtrail::cupti
