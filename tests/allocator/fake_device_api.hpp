// A test double of the CUDA runtime (DeviceApi), not of any pool: devices
// with a fixed memory size handing out made-up, never dereferenced
// addresses; cudaErrorMemoryAllocation ("out of memory", code 2) when full;
// a default stream-ordered pool per device that keeps freed memory
// reserved; CUDA events that complete when the test says the stream's work
// is done. Every call's stream is logged.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "memtrail/alloc/device_api.hpp"

namespace memtrail::test {

using alloc::DeviceMemory;
using alloc::DevicePoolUsage;
using alloc::DeviceStatus;
using alloc::StreamId;

class FakeDeviceApi final : public alloc::DeviceApi {
 public:
  static constexpr std::uint64_t kPoolGranule = 2ull << 20;  // async pool reserves in 2 MiB

  explicit FakeDeviceApi(std::vector<std::uint64_t> device_bytes) {
    for (std::uint64_t b : device_bytes) devices_.push_back({b, 0, {}});
  }

  // What the pools did to the device.
  std::vector<std::pair<std::string, StreamId>> calls;  // ("cudaMallocAsync", stream), ...
  std::uint64_t used(int device) const { return devices_.at(device).used; }
  std::size_t live_allocations() const { return live_.size(); }
  std::size_t live_events() const { return events_.size(); }
  int waits = 0;
  // The next allocation fails with this error (0: none).
  int fail_next_with = 0;

  // The GPU finished everything queued on `stream` so far.
  void complete_stream(StreamId stream) {
    for (auto& [id, e] : events_)
      if (e.stream == stream) e.done = true;
  }

  int device_count(std::string* error) override {
    if (devices_.empty() && error) *error = "no CUDA-capable device is detected";
    return static_cast<int>(devices_.size());
  }
  DeviceStatus memory_info(int device, std::uint64_t* free, std::uint64_t* total) override {
    const Device& d = devices_.at(device);
    *total = d.bytes;
    *free = d.bytes - d.used;
    return {};
  }
  DeviceStatus allocate(DeviceMemory kind, int device, std::size_t bytes, void** out) override {
    calls.emplace_back(kind == DeviceMemory::device   ? "cudaMalloc"
                       : kind == DeviceMemory::pinned ? "cudaMallocHost"
                                                      : "cudaMallocManaged",
                       0);
    if (kind == DeviceMemory::pinned) device = 0;  // host memory: not charged to a device
    return take(kind == DeviceMemory::pinned ? nullptr : &devices_.at(device), bytes, out);
  }
  void release(DeviceMemory kind, int, void* p) noexcept override {
    calls.emplace_back(kind == DeviceMemory::pinned ? "cudaFreeHost" : "cudaFree", 0);
    give(p);
  }
  DeviceStatus allocate_async(int device, std::size_t bytes, StreamId stream, void** out) override {
    calls.emplace_back("cudaMallocAsync", stream);
    Device& d = devices_.at(device);
    const std::uint64_t need = d.pool.used + bytes;
    if (need > d.pool.reserved) {  // grow the pool's reservation from the device
      const std::uint64_t grow =
          (need - d.pool.reserved + kPoolGranule - 1) / kPoolGranule * kPoolGranule;
      if (d.used + grow > d.bytes) return oom(out);
      d.used += grow;
      d.pool.reserved += grow;
    }
    DeviceStatus s = take(nullptr, bytes, out);
    if (!s.ok()) return s;
    d.pool.used += bytes;
    d.pool.used_high = std::max(d.pool.used_high, d.pool.used);
    d.pool.reserved_high = std::max(d.pool.reserved_high, d.pool.reserved);
    async_[*out] = {device, bytes};
    return s;
  }
  void release_async(int, void* p, StreamId stream) noexcept override {
    calls.emplace_back("cudaFreeAsync", stream);
    auto [device, bytes] = async_.at(p);
    async_.erase(p);
    devices_.at(device).pool.used -= bytes;  // stays reserved, as under the default threshold
    give(p);
  }
  DeviceStatus pool_usage(int device, DevicePoolUsage* out) override {
    *out = devices_.at(device).pool;
    return {};
  }
  std::uint64_t record_event(int, StreamId stream) override {
    calls.emplace_back("cudaEventRecord", stream);
    events_[++next_event_] = {stream, false};
    return next_event_;
  }
  bool event_done(std::uint64_t event) override { return events_.at(event).done; }
  void wait_event(std::uint64_t event) noexcept override {
    ++waits;
    events_.at(event).done = true;
  }
  void destroy_event(std::uint64_t event) noexcept override { events_.erase(event); }

 private:
  struct Device {
    std::uint64_t bytes, used = 0;
    DevicePoolUsage pool;
  };
  struct Event {
    StreamId stream;
    bool done;
  };

  static DeviceStatus oom(void** out) {
    *out = nullptr;
    return {2, "out of memory", true};
  }
  DeviceStatus take(Device* d, std::size_t bytes, void** out) {
    if (fail_next_with) {
      *out = nullptr;
      const int code = std::exchange(fail_next_with, 0);
      return {code, code == 2 ? "out of memory" : "an illegal memory access was encountered",
              code == 2};
    }
    if (d && d->used + bytes > d->bytes) return oom(out);
    if (d) d->used += bytes;
    *out = reinterpret_cast<void*>(next_address_);
    live_[*out] = {d, bytes};
    next_address_ += (bytes + 0xfffff) / 0x100000 * 0x100000 + 0x100000;  // never adjacent
    return {};
  }
  void give(void* p) {
    auto [d, bytes] = live_.at(p);
    if (d) d->used -= bytes;
    live_.erase(p);
  }

  std::vector<Device> devices_;
  std::map<void*, std::pair<Device*, std::uint64_t>> live_;
  std::map<void*, std::pair<int, std::uint64_t>> async_;
  std::map<std::uint64_t, Event> events_;
  std::uint64_t next_event_ = 0;
  std::uintptr_t next_address_ = 0x7f0000000000;
};

}  // namespace memtrail::test
