// cudaMalloc/cudaFree pairs in a loop, timed, for the tracer's overhead
// (scripts/gpu-check runs it with and without `memtrail run --cuda`).
//   cuda_malloc_loop [PAIRS] [BYTES]     default 20000 pairs of 1 MiB
// Prints "cuda_malloc_loop: PAIRS pairs of BYTES B: NS ns/pair". Without a
// device it says so and exits 0.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  const long pairs = argc > 1 ? std::atol(argv[1]) : 20000;
  const long bytes = argc > 2 ? std::atol(argv[2]) : 1 << 20;
  if (pairs <= 0 || bytes <= 0) {
    std::fprintf(stderr, "cuda_malloc_loop: PAIRS and BYTES must be positive numbers\n");
    return 2;
  }
  int count = 0;
  if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess || count == 0) {
    std::printf("cuda_malloc_loop: no CUDA device (%s); nothing to measure\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    return 0;
  }
  cudaFree(nullptr);  // create the context outside the timed loop
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < pairs; ++i) {
    void* p = nullptr;
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
      std::fprintf(stderr, "cuda_malloc_loop: cudaMalloc failed at pair %ld\n", i);
      return 1;
    }
    cudaFree(p);
  }
  const auto ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("cuda_malloc_loop: %ld pairs of %ld B: %.1f ns/pair\n", pairs, bytes,
              static_cast<double>(ns) / pairs);
  return 0;
}
