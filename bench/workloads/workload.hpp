// Shared pieces of the benchmark suite's allocation workloads
// (bench/suite.sh), also used by bench/gui_churn and bench/bench_format: a
// fixed-seed generator, argument parsing, size mixes and
// an allocation site the compiler cannot merge away. Header-only so every
// workload stays one small, self-contained program.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace workload {

// splitmix64: tiny, fast and fixed-seed, so every run allocates the same.
struct Rng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::uint64_t below(std::uint64_t n) { return next() % n; }
};

// A size in [1 << lo_shift, 1 << hi_shift], log-uniform, so small blocks
// dominate as in real code.
inline std::size_t log_uniform_size(Rng& rng, unsigned lo_shift, unsigned hi_shift) {
  std::uint64_t r = rng.next();
  unsigned shift = lo_shift + static_cast<unsigned>(r % (hi_shift - lo_shift + 1));
  std::size_t size = std::size_t{1} << shift;
  if (shift > lo_shift) size -= (r >> 8) % (size / 2);  // (size/2, size]
  return size;
}

// Positive decimal argument `index` of argv, or `fallback` when absent.
// Exits with the usage line on anything else.
inline long arg(int argc, char** argv, int index, long fallback, const char* usage) {
  if (index >= argc) return fallback;
  char* end = nullptr;
  long value = std::strtol(argv[index], &end, 10);
  if (*argv[index] == '\0' || *end != '\0' || value <= 0) {
    std::fprintf(stderr, "usage: %s\n", usage);
    std::exit(2);
  }
  return value;
}

inline void too_many_args(int argc, int most, const char* usage) {
  if (argc - 1 <= most) return;
  std::fprintf(stderr, "usage: %s\n", usage);
  std::exit(2);
}

// Touches a new block as a real program would, and keeps the optimizer from
// pairing or dropping the allocation.
inline void touch(void* p) {
  if (p == nullptr) std::abort();
  static_cast<volatile char*>(p)[0] = 1;
  asm volatile("" ::: "memory");
}

// The checksum line every workload ends with: the same on every run.
inline void report(const char* name, std::uint64_t checksum) {
  std::printf("%s: checksum %016llx\n", name, static_cast<unsigned long long>(checksum));
}

}  // namespace workload
