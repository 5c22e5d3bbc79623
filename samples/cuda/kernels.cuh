// The device side of the CUDA sample (kernels.cu), callable from plain C++.
#pragma once

#include <cstddef>

namespace cuda_sample {

// The deliberate leak: kLeakBlocks cudaMalloc's of kLeakBytes each, at one
// line of kernels.cu (scripts/gpu-check checks count, bytes and file:line).
constexpr int kLeakBlocks = 3;
constexpr std::size_t kLeakBytes = 256 << 10;
void leak_device_buffers();

// y = a*x + y over n floats on `stream` (a cudaStream_t, 0: default), with
// x and y first filled with 1 and 2. Returns y[n-1] read back (a + 2).
float fill_and_saxpy(float a, float* x, float* y, std::size_t n, void* stream);

}  // namespace cuda_sample
