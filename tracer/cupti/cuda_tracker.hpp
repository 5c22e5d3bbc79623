// CudaTracker: turns decoded CUDA memory calls into memtrail events. It keeps
// the table of live CUDA blocks (pool, size, context, stream), registers a
// pool per memory kind and device on first use, and classifies the blocks
// still live when their context is destroyed or the process exits as leaks
// (compute-sanitizer's `--leak-check full` definition). Static __device__
// memory is never allocated through these calls, so it never enters the table.
//
// It runs without CUPTI: the injection (injection.cpp) feeds it from the
// callbacks; tests feed it hand-filled CUPTI parameter structs and read the
// events from a test sink.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cuda_call.hpp"
#include "memtrail/event.hpp"

namespace memtrail::cupti {

// Where events go: the recorder (recorder_sink.cpp) or a test.
class CudaSink {
 public:
  virtual ~CudaSink() = default;
  virtual std::uint32_t register_pool(const PoolInfo& info) = 0;
  virtual std::uint32_t intern_string(const std::string& text) = 0;
  // With the calling thread's host stack (alloc, oom).
  virtual void record_with_stack(const Event& e) = 0;
  // Without a stack (free: its alloc's stack names the block; reachability).
  virtual void record_plain(const Event& e) = 0;
  virtual void flush() = 0;
  // Bookkeeping between enter_internal and leave_internal may allocate; the
  // recorder sink hides those mallocs from the heap trace.
  virtual void enter_internal() {}
  virtual void leave_internal() {}
};

// What the tracker asks the driver (driver_queries.cpp over CUPTI and libcuda;
// tests answer from tables).
class DeviceQueries {
 public:
  virtual ~DeviceQueries() = default;
  virtual int device_of(CUcontext context) = 0;  // -1 = unknown
  // CUPTI's stream id, 0 when unknown.
  virtual std::uint32_t stream_id(CUcontext context, CUstream stream, bool per_thread) = 0;
  // The current context's device free/total bytes; false when unavailable.
  virtual bool memory_info(std::uint64_t* free, std::uint64_t* total) = 0;
  // A stream-ordered memory pool's CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT
  // (pool null: the device's current pool); false when unavailable.
  virtual bool pool_reserved(int device, CUmemoryPool pool, std::uint64_t* bytes) = 0;
};

// One API call as the callback sees it.
struct ApiCall {
  CUpti_CallbackId cbid = 0;
  const void* params = nullptr;
  bool exit = false;
  CUresult result = CUDA_SUCCESS;  // exit only
  CUcontext context = nullptr;
  std::uint32_t context_uid = 0;
  const char* api_name = nullptr;  // the runtime API the user called, if any
};

class CudaTracker {
 public:
  CudaTracker(CudaSink& sink, DeviceQueries& queries) : sink_(sink), queries_(queries) {}

  // A driver API callback (enter or exit). Returns true if it was a memory call.
  bool on_driver_call(const ApiCall& call);
  // The context is being destroyed: its live blocks are leaks (reachability
  // events, LeakClass::direct), then the trace is flushed.
  void on_context_destroy(CUcontext context);
  // Process exit: every block still live is a leak; flushed.
  void on_exit();

  // Device free bytes as last measured (the recorder's samples read it).
  std::uint64_t device_free() const { return device_free_.load(std::memory_order_relaxed); }
  std::uint64_t device_total() const { return device_total_.load(std::memory_order_relaxed); }

  struct Counts {
    std::uint64_t live_blocks = 0, live_bytes = 0, leaked_blocks = 0, leaked_bytes = 0;
  };
  Counts counts() const;
  // Measure device memory at most this often (0 = on every call).
  void set_memory_info_interval_ns(std::uint64_t ns) { info_interval_ns_ = ns; }

 private:
  struct Block {
    std::uint32_t pool = 0;
    std::uint64_t size = 0;
    CUcontext context = nullptr;
  };
  struct Handle {
    std::uint32_t pool = 0;
    std::uint64_t size = 0;
    CUcontext context = nullptr;
  };

  std::uint32_t pool_for(Family family, int device);
  void alloc(const ApiCall& call, const CudaCall& c);
  void free(const CudaCall& c);
  void vmm(const ApiCall& call, const CudaCall& c);
  void out_of_memory(const ApiCall& call, const CudaCall& c);
  void leak_blocks(CUcontext context);
  void measure_memory(bool force);
  // Records the change in each device's stream-ordered pools' reserved
  // bytes (all of it given back when `release_device` >= -1 matches).
  void sample_pool_reserves(bool release, int release_device);

  CudaSink& sink_;
  DeviceQueries& queries_;
  mutable std::mutex mutex_;
  std::unordered_map<std::uint64_t, Block> blocks_;     // by address
  std::unordered_map<std::uint64_t, Handle> handles_;   // VMM physical memory, by handle
  std::map<std::uint64_t, Block> mappings_;             // VMM mapped ranges, by address
  std::map<std::pair<int, int>, std::uint32_t> pools_;  // (family, device) -> pool id
  std::uint64_t leaked_blocks_ = 0, leaked_bytes_ = 0;
  // Stream-ordered pools seen per device, and their reserved bytes as last
  // recorded in the pool "cuda:N stream-ordered".
  std::map<int, std::vector<CUmemoryPool>> mem_pools_;
  std::map<int, std::uint64_t> recorded_reserve_;
  std::atomic<std::uint64_t> device_free_{0}, device_total_{0};
  std::atomic<std::uint64_t> last_info_ns_{0};
  std::uint64_t info_interval_ns_ = 10'000'000;
};

// Pool names: "cuda:N device", "cuda pinned", "cuda managed", "cuda:N vmm".
PoolInfo cuda_pool_info(Family family, int device);
// "cuda:N stream-ordered": the reserved bytes of the device's stream-ordered
// memory pools, drawn as segments of one made-up address range.
PoolInfo cuda_reserve_pool_info(int device);

}  // namespace memtrail::cupti
