// CudaTracker: see cuda_tracker.hpp.
#include "cuda_tracker.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

namespace memtrail::cupti {
namespace {

// Device blocks, stream-ordered blocks and VMM mappings share one pool per
// device: they are all the device's memory as the program sees it.
Family pool_family(Family f) {
  return f == Family::async ? Family::device : f;
}

// Pool key of "cuda:N stream-ordered" in pools_ (beside the families).
constexpr int kReserveKey = 100;

// Where a device's stream-ordered reserve is drawn: made-up addresses,
// reserved bytes growing upwards from the base, given back from the top.
std::uint64_t reserve_base(int device) {
  return (0xcafeull << 48) | (static_cast<std::uint64_t>(device < 0 ? 0 : device) << 40);
}

std::uint64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Bookkeeping may allocate (table nodes): hidden from the heap trace.
class Internal {
 public:
  explicit Internal(CudaSink& sink) : sink_(sink) { sink_.enter_internal(); }
  ~Internal() { sink_.leave_internal(); }

 private:
  CudaSink& sink_;
};

}  // namespace

PoolInfo cuda_pool_info(Family family, int device) {
  PoolInfo info;
  info.kind = PoolKind::cuda;
  std::string dev = "cuda:" + std::to_string(device < 0 ? 0 : device);
  switch (pool_family(family)) {
    case Family::pinned:
      info.name = "cuda pinned";
      info.space = MemorySpace::pinned;
      return info;
    case Family::managed:
      info.name = "cuda managed";
      info.space = MemorySpace::managed;
      return info;
    case Family::vmm:
      info.name = dev + " vmm";
      break;
    default:
      info.name = dev + " device";
      break;
  }
  info.space = MemorySpace::device;
  info.device = device < 0 ? 0 : device;
  return info;
}

PoolInfo cuda_reserve_pool_info(int device) {
  PoolInfo info = cuda_pool_info(Family::device, device);
  info.name = "cuda:" + std::to_string(info.device) + " stream-ordered";
  return info;
}

std::uint32_t CudaTracker::pool_for(Family family, int device) {
  Family f = pool_family(family);
  if (f == Family::pinned || f == Family::managed) device = -1;  // one pool per process
  auto key = std::make_pair(static_cast<int>(f), device);
  auto it = pools_.find(key);
  if (it != pools_.end()) return it->second;
  std::uint32_t id = sink_.register_pool(cuda_pool_info(f, device));
  pools_.emplace(key, id);
  return id;
}

bool CudaTracker::on_driver_call(const ApiCall& call) {
  CudaCall c;
  if (!decode_call(call.cbid, call.params, call.exit, &c)) return false;
  if (call.exit && call.result != CUDA_SUCCESS) {
    if (call.result == CUDA_ERROR_OUT_OF_MEMORY) out_of_memory(call, c);
    return true;
  }
  switch (c.op) {
    case CallOp::alloc:
      alloc(call, c);
      break;
    case CallOp::free:
      free(c);
      break;
    case CallOp::none:
      break;
    default:
      vmm(call, c);
      break;
  }
  if (c.op != CallOp::none) {
    // Stream-ordered calls are what grows a pool's reserve: sampled at each.
    if (c.family == Family::async) sample_pool_reserves(false, -1);
    measure_memory(false);
  }
  return true;
}

void CudaTracker::alloc(const ApiCall& call, const CudaCall& c) {
  Event e;
  e.kind = EventKind::alloc;
  e.detail = static_cast<std::uint8_t>(AllocFn::unknown);
  e.address = c.address;
  e.size = c.size;
  e.requested = c.requested;
  {
    Internal quiet(sink_);
    std::lock_guard<std::mutex> lock(mutex_);
    int device = c.family == Family::pinned ? -1 : queries_.device_of(call.context);
    e.pool = pool_for(c.family, device);
    // Stream-ordered blocks carry their stream (CUPTI stream id) in aux.
    if (c.family == Family::async) {
      e.aux = queries_.stream_id(call.context, c.stream, c.per_thread_stream);
      auto& pools = mem_pools_[device];
      if (std::find(pools.begin(), pools.end(), c.mem_pool) == pools.end())
        pools.push_back(c.mem_pool);
    }
    blocks_[c.address] = Block{e.pool, c.size, call.context};
  }
  sink_.record_with_stack(e);
}

void CudaTracker::free(const CudaCall& c) {
  Event e;
  e.kind = EventKind::free;
  e.detail = static_cast<std::uint8_t>(AllocFn::unknown);
  e.address = c.address;
  {
    Internal quiet(sink_);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blocks_.find(c.address);
    if (it == blocks_.end()) return;  // not ours (a null free, or allocated before tracing)
    e.pool = it->second.pool;
    e.size = it->second.size;
    blocks_.erase(it);
  }
  sink_.record_plain(e);
}

// Physical memory (cuMemCreate) is the pool "cuda:N vmm", its blocks named
// by their handle; mapped ranges are `map` segments of the device pool.
void CudaTracker::vmm(const ApiCall& call, const CudaCall& c) {
  Event e;
  bool stack = false;
  {
    Internal quiet(sink_);
    std::lock_guard<std::mutex> lock(mutex_);
    if (c.op == CallOp::create) {
      int device = c.device >= 0 ? c.device : queries_.device_of(call.context);
      e = Event{.pool = pool_for(Family::vmm, device), .kind = EventKind::alloc};
      e.address = c.handle;
      e.size = e.requested = c.size;
      handles_[c.handle] = Handle{e.pool, c.size, call.context};
      stack = true;
    } else if (c.op == CallOp::release) {
      auto it = handles_.find(c.handle);
      if (it == handles_.end()) return;
      e = Event{.pool = it->second.pool, .kind = EventKind::free};
      e.address = c.handle;
      e.size = it->second.size;
      handles_.erase(it);
    } else if (c.op == CallOp::map) {
      auto h = handles_.find(c.handle);
      int device = queries_.device_of(call.context);
      e = Event{.pool = pool_for(Family::device, device), .kind = EventKind::segment_reserve};
      e.address = c.address;
      e.size = c.size;
      mappings_[c.address] = Block{e.pool, c.size, h == handles_.end() ? nullptr : call.context};
      stack = true;
    } else {  // unmap
      auto it = mappings_.find(c.address);
      if (it == mappings_.end()) return;
      e = Event{.pool = it->second.pool, .kind = EventKind::segment_release};
      e.address = c.address;
      e.size = it->second.size;
      mappings_.erase(it);
    }
    e.detail = static_cast<std::uint8_t>(c.op == CallOp::map || c.op == CallOp::unmap
                                             ? static_cast<std::uint8_t>(SegmentDetail::map)
                                             : static_cast<std::uint8_t>(AllocFn::unknown));
  }
  if (stack)
    sink_.record_with_stack(e);
  else
    sink_.record_plain(e);
}

// A refused allocation: an `oom` event whose JSON names the API the program
// called and the device's memory at that moment. The params still hold the
// request (the output pointer is not written).
void CudaTracker::out_of_memory(const ApiCall& call, const CudaCall& c) {
  measure_memory(true);
  Event e;
  e.kind = EventKind::oom;
  {
    Internal quiet(sink_);
    std::lock_guard<std::mutex> lock(mutex_);
    int device = c.family == Family::pinned ? -1 : queries_.device_of(call.context);
    std::string state = "{\"api\":\"" + std::string(call.api_name ? call.api_name : "") +
                        "\",\"device\":" + std::to_string(device) +
                        ",\"free\":" + std::to_string(device_free()) +
                        ",\"total\":" + std::to_string(device_total()) + "}";
    e.pool = pool_for(c.family, device);
    e.size = c.requested;
    e.requested = c.requested;
    e.aux = sink_.intern_string(state);
  }
  sink_.record_with_stack(e);
}

// Records every live block (and VMM handle) of `context` (all of them when
// `context` is null) as a direct leak and forgets it: the driver frees them
// with the context, and nothing will free them again.
void CudaTracker::leak_blocks(CUcontext context) {
  std::vector<Event> leaks;
  {
    Internal quiet(sink_);
    std::lock_guard<std::mutex> lock(mutex_);
    auto take = [&](auto& table) {
      for (auto it = table.begin(); it != table.end();) {
        if (context != nullptr && it->second.context != context) {
          ++it;
          continue;
        }
        Event e;
        e.kind = EventKind::reachability;
        e.detail = static_cast<std::uint8_t>(LeakClass::direct);
        e.pool = it->second.pool;
        e.address = it->first;
        e.size = it->second.size;
        leaks.push_back(e);
        ++leaked_blocks_;
        leaked_bytes_ += e.size;
        it = table.erase(it);
      }
    };
    take(blocks_);
    take(handles_);
    // Mappings are address space, not memory: dropped with their context.
    for (auto it = mappings_.begin(); it != mappings_.end();)
      it = context == nullptr || it->second.context == context ? mappings_.erase(it) : ++it;
  }
  for (const Event& e : leaks) sink_.record_plain(e);
}

void CudaTracker::on_context_destroy(CUcontext context) {
  if (context == nullptr) return;
  leak_blocks(context);
  sample_pool_reserves(true, queries_.device_of(context));
  sink_.flush();
}

void CudaTracker::on_exit() {
  leak_blocks(nullptr);
  sample_pool_reserves(true, -1);
  sink_.flush();
}

// Stream-ordered pools keep freed memory reserved; the driver says how
// much (RESERVED_MEM_CURRENT). Each change becomes a segment_reserve or
// segment_release of the difference in "cuda:N stream-ordered", so the
// report's reserved curve and peak of that pool are the pools' reserve as
// sampled. `release`: the pools are going away with the context (device
// `release_device`, -1 = every device): all of it is given back.
void CudaTracker::sample_pool_reserves(bool release, int release_device) {
  std::vector<Event> events;
  {
    Internal quiet(sink_);
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [device, pools] : mem_pools_) {
      if (release && release_device >= 0 && device != release_device) continue;
      std::uint64_t now = 0;
      bool known = release;
      for (CUmemoryPool pool : pools) {
        std::uint64_t bytes = 0;
        if (!release && queries_.pool_reserved(device, pool, &bytes)) {
          now += bytes;
          known = true;
        }
      }
      std::uint64_t& was = recorded_reserve_[device];
      if (!known || now == was) continue;
      Event e;
      e.kind = now > was ? EventKind::segment_reserve : EventKind::segment_release;
      e.detail = static_cast<std::uint8_t>(SegmentDetail::whole);
      auto key = std::make_pair(kReserveKey, device);
      auto it = pools_.find(key);
      if (it == pools_.end())
        it = pools_.emplace(key, sink_.register_pool(cuda_reserve_pool_info(device))).first;
      e.pool = it->second;
      e.address = reserve_base(device) + std::min(now, was);
      e.size = now > was ? now - was : was - now;
      was = now;
      events.push_back(e);
    }
  }
  for (const Event& e : events) sink_.record_plain(e);
}

CudaTracker::Counts CudaTracker::counts() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Counts c;
  for (const auto& [address, b] : blocks_) {
    ++c.live_blocks;
    c.live_bytes += b.size;
  }
  for (const auto& [handle, h] : handles_) {
    ++c.live_blocks;
    c.live_bytes += h.size;
  }
  c.leaked_blocks = leaked_blocks_;
  c.leaked_bytes = leaked_bytes_;
  return c;
}

// Device free/total for the samples, measured on an API thread (the driver
// answers for the calling thread's context), at most once per interval.
void CudaTracker::measure_memory(bool force) {
  std::uint64_t now = now_ns();
  std::uint64_t last = last_info_ns_.load(std::memory_order_relaxed);
  if (!force && now - last < info_interval_ns_) return;
  if (!last_info_ns_.compare_exchange_strong(last, now) && !force) return;
  sample_pool_reserves(false, -1);
  std::uint64_t free = 0, total = 0;
  if (!queries_.memory_info(&free, &total)) return;
  device_free_.store(free, std::memory_order_relaxed);
  device_total_.store(total, std::memory_order_relaxed);
}

}  // namespace memtrail::cupti
