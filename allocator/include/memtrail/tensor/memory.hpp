// memory() and profile(): TF.js's counters.
//
// numTensors counts tensors not yet disposed, numDataBuffers their distinct
// data buffers, numBytes the LOGICAL bytes of each tensor (a buffer shared
// by a reshape and a clone counts three times: 16 B -> 48). `unreliable`
// with a reason when tensors were dropped without dispose() (their last
// handle went away: they can never be freed and stay counted).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "memtrail/tensor/tensor.hpp"

namespace memtrail::tensor {

struct MemoryInfo {
  std::uint64_t num_tensors = 0;
  std::uint64_t num_data_buffers = 0;
  std::uint64_t num_bytes = 0;
  bool unreliable = false;
  std::vector<std::string> reasons;
};
MemoryInfo memory();

struct KernelRecord {
  std::string
      name;  // "Add", "Multiply", "BatchMatMul", "Relu", "Sum", "Softmax", "Reshape", "Identity"
  std::int64_t bytes_added = 0;  // numBytes after - before (negative when a donation disposed)
  std::uint64_t total_bytes_snapshot = 0;
  std::int64_t tensors_added = 0;
  std::uint64_t total_tensors_snapshot = 0;
  std::vector<Shape> input_shapes, output_shapes;
};

struct ProfileInfo {
  std::int64_t new_bytes = 0;    // numBytes at the end - at the start
  std::int64_t new_tensors = 0;  // numTensors at the end - at the start
  // max of the kernels' total_bytes_snapshot; -infinity with no kernel (as TF.js)
  double peak_bytes = 0;
  std::vector<KernelRecord> kernels;
};
// Runs fn on this thread and records the kernels it runs (nested profiles:
// the innermost records).
ProfileInfo profile(const std::function<void()>& fn);

}  // namespace memtrail::tensor
