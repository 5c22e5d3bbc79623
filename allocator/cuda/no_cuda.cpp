// cuda_runtime_api() for builds without CUDA support: no device, every call
// fails saying so.
#include "memtrail/alloc/device_api.hpp"

namespace memtrail::alloc {
namespace {

constexpr const char* kWhy = "memtrail was built without CUDA support";

class NoCudaApi final : public DeviceApi {
 public:
  int device_count(std::string* error) override {
    if (error) *error = kWhy;
    return 0;
  }
  DeviceStatus memory_info(int, std::uint64_t* free, std::uint64_t* total) override {
    *free = *total = 0;
    return fail();
  }
  DeviceStatus allocate(DeviceMemory, int, std::size_t, void** out) override {
    *out = nullptr;
    return fail();
  }
  void release(DeviceMemory, int, void*) noexcept override {}
  DeviceStatus allocate_async(int, std::size_t, StreamId, void** out) override {
    *out = nullptr;
    return fail();
  }
  void release_async(int, void*, StreamId) noexcept override {}
  DeviceStatus pool_usage(int, DevicePoolUsage*) override { return fail(); }
  std::uint64_t record_event(int, StreamId) override { return 0; }
  bool event_done(std::uint64_t) override { return true; }
  void wait_event(std::uint64_t) noexcept override {}
  void destroy_event(std::uint64_t) noexcept override {}

 private:
  static DeviceStatus fail() { return {1, kWhy, false}; }
};

}  // namespace

DeviceApi& cuda_runtime_api() {
  static NoCudaApi api;
  return api;
}

}  // namespace memtrail::alloc
