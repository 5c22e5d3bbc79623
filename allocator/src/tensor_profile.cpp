// memory() and profile() (memory.hpp).
#include <limits>

#include "memtrail/tensor/memory.hpp"
#include "tensor_engine.hpp"

namespace memtrail::tensor {
namespace {
thread_local ProfileInfo* t_profile = nullptr;
}

MemoryInfo memory() {
  const detail::Counters c = detail::counters();
  MemoryInfo m;
  m.num_tensors = c.tensors;
  m.num_data_buffers = c.buffers;
  m.num_bytes = c.bytes;
  const std::uint64_t orphans = detail::engine().orphans.load(std::memory_order_relaxed);
  if (orphans > 0) {
    m.unreliable = true;
    m.reasons.push_back(std::to_string(orphans) +
                        " tensors lost their last handle without dispose(): they can no longer "
                        "be freed and stay counted here");
  }
  return m;
}

ProfileInfo profile(const std::function<void()>& fn) {
  ProfileInfo info;
  ProfileInfo* outer = t_profile;
  const detail::Counters start = detail::counters();
  t_profile = &info;
  try {
    fn();
  } catch (...) {
    t_profile = outer;
    throw;
  }
  t_profile = outer;
  const detail::Counters end = detail::counters();
  info.new_bytes = static_cast<std::int64_t>(end.bytes) - static_cast<std::int64_t>(start.bytes);
  info.new_tensors =
      static_cast<std::int64_t>(end.tensors) - static_cast<std::int64_t>(start.tensors);
  info.peak_bytes = -std::numeric_limits<double>::infinity();
  for (const KernelRecord& k : info.kernels)
    info.peak_bytes = std::max(info.peak_bytes, static_cast<double>(k.total_bytes_snapshot));
  return info;
}

namespace detail {
void record_kernel(const char* name, const Counters& before, std::vector<Shape> inputs,
                   std::vector<Shape> outputs) {
  if (!t_profile) return;
  const Counters after = counters();
  KernelRecord k;
  k.name = name;
  k.bytes_added = static_cast<std::int64_t>(after.bytes) - static_cast<std::int64_t>(before.bytes);
  k.total_bytes_snapshot = after.bytes;
  k.tensors_added =
      static_cast<std::int64_t>(after.tensors) - static_cast<std::int64_t>(before.tensors);
  k.total_tensors_snapshot = after.tensors;
  k.input_shapes = std::move(inputs);
  k.output_shapes = std::move(outputs);
  t_profile->kernels.push_back(std::move(k));
}
}  // namespace detail

}  // namespace memtrail::tensor
