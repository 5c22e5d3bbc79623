// A CUDA program for `memtrail run --cuda` tests: allocates device memory,
// runs a kernel, frees, and exits with the code given (default 0). Without a
// driver every call fails and it still exits with that code.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

__global__ void fill(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = i;
}

int main(int argc, char** argv) {
  int code = argc > 1 ? std::atoi(argv[1]) : 0;
  int* p = nullptr;
  cudaError_t e = cudaMalloc(&p, 1 << 20);
  std::printf("cudaMalloc: %s\n", cudaGetErrorName(e));
  if (e == cudaSuccess) {
    fill<<<1024, 256>>>(p, 1 << 18);
    std::printf("kernel: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    cudaFree(p);
  }
  return code;
}
