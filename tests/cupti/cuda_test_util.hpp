// Test doubles for the CUDA tracker: a sink that keeps the events and a
// DeviceQueries answering from tables (what the driver would say).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cuda_tracker.hpp"

namespace memtrail::cupti::test {

struct EventSink final : CudaSink {
  std::vector<PoolInfo> pools;  // index = id - 1
  std::vector<std::string> strings;
  std::vector<Event> events;
  std::vector<bool> with_stack;
  int flushes = 0;

  std::uint32_t register_pool(const PoolInfo& info) override {
    pools.push_back(info);
    pools.back().id = static_cast<std::uint32_t>(pools.size());
    return pools.back().id;
  }
  std::uint32_t intern_string(const std::string& text) override {
    strings.push_back(text);
    return static_cast<std::uint32_t>(strings.size());
  }
  void record_with_stack(const Event& e) override {
    events.push_back(e);
    with_stack.push_back(true);
  }
  void record_plain(const Event& e) override {
    events.push_back(e);
    with_stack.push_back(false);
  }
  void flush() override { ++flushes; }
  const PoolInfo& pool(const Event& e) const { return pools.at(e.pool - 1); }
};

struct TableQueries final : DeviceQueries {
  std::map<CUcontext, int> devices;
  std::map<CUstream, std::uint32_t> streams;
  std::uint64_t free = 0, total = 0;
  int device_of(CUcontext context) override {
    auto it = devices.find(context);
    return it == devices.end() ? -1 : it->second;
  }
  std::uint32_t stream_id(CUcontext, CUstream stream, bool) override {
    auto it = streams.find(stream);
    return it == streams.end() ? 0 : it->second;
  }
  // RESERVED_MEM_CURRENT per stream-ordered pool (null: a device's current one).
  std::map<std::pair<int, CUmemoryPool>, std::uint64_t> reserved;
  bool pool_reserved(int device, CUmemoryPool pool, std::uint64_t* bytes) override {
    auto it = reserved.find({device, pool});
    if (it == reserved.end()) return false;
    *bytes = it->second;
    return true;
  }
  bool memory_info(std::uint64_t* f, std::uint64_t* t) override {
    if (total == 0) return false;
    *f = free;
    *t = total;
    return true;
  }
};

// Distinct fake handles: the tracker only compares them.
inline CUcontext fake_context(int n) {
  return reinterpret_cast<CUcontext>(static_cast<std::uintptr_t>(0x1000 * n));
}
inline CUstream fake_stream(int n) {
  return reinterpret_cast<CUstream>(static_cast<std::uintptr_t>(0x2000 * n + 8));
}

// Runs one driver call through the tracker as CUPTI would: enter, then exit.
template <class Params>
void drive(CudaTracker& tracker, CUpti_CallbackId cbid, Params& params, CUcontext context,
           CUresult result = CUDA_SUCCESS, const char* api = nullptr) {
  ApiCall call;
  call.cbid = cbid;
  call.params = &params;
  call.context = context;
  call.api_name = api;
  call.exit = false;
  tracker.on_driver_call(call);
  call.exit = true;
  call.result = result;
  tracker.on_driver_call(call);
}

}  // namespace memtrail::cupti::test
