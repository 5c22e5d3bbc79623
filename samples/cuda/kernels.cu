// Kernels and the deliberate device leak of the CUDA sample.
#include <cuda_runtime.h>

#include <cstdio>

#include "kernels.cuh"

namespace cuda_sample {
namespace {

__global__ void fill(float* x, float value, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) x[i] = value;
}

__global__ void saxpy(float a, const float* x, float* y, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

}  // namespace

// Never freed: a leak at context destroy (cudaDeviceReset) and at exit.
__attribute__((noinline)) void leak_device_buffers() {
  for (int i = 0; i < kLeakBlocks; ++i) {
    void* p = nullptr;
    if (cudaMalloc(&p, kLeakBytes) != cudaSuccess)
      std::printf("cuda_sample: leak cudaMalloc failed\n");
  }
}

float fill_and_saxpy(float a, float* x, float* y, std::size_t n, void* stream) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  const unsigned blocks = static_cast<unsigned>((n + 255) / 256);
  fill<<<blocks, 256, 0, s>>>(x, 1.0f, n);
  fill<<<blocks, 256, 0, s>>>(y, 2.0f, n);
  saxpy<<<blocks, 256, 0, s>>>(a, x, y, n);
  float last = 0;
  cudaMemcpyAsync(&last, y + n - 1, sizeof last, cudaMemcpyDeviceToHost, s);
  cudaStreamSynchronize(s);
  return last;
}

}  // namespace cuda_sample
