// realloc_growth: buffers that grow by realloc, as a string builder or a
// vector without reserve does. BUFFERS buffers, one after another, each
// grown STEPS times by 16..256 B from 16 B, then freed: every step is a
// realloc that may move the block.
//
//   realloc_growth BUFFERS [STEPS]
#include "workload.hpp"

namespace {

__attribute__((noinline)) char* grow(char* buffer, std::size_t size) {
  auto* p = static_cast<char*>(std::realloc(buffer, size));
  workload::touch(p);
  p[size - 1] = 2;
  return p;
}

std::uint64_t build_one(workload::Rng& rng, long steps) {
  std::size_t size = 16;
  char* buffer = grow(nullptr, size);
  for (long s = 0; s < steps; ++s) {
    size += 16 + rng.below(241);
    buffer = grow(buffer, size);
  }
  std::free(buffer);
  return size;
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "realloc_growth BUFFERS [STEPS]";
  workload::too_many_args(argc, 2, usage);
  long buffers = workload::arg(argc, argv, 1, 10000, usage);
  long steps = workload::arg(argc, argv, 2, 100, usage);
  workload::Rng rng{0x7265616c6cull};
  std::uint64_t sum = 0;
  for (long b = 0; b < buffers; ++b) sum = sum * 31 + build_one(rng, steps);
  workload::report("realloc_growth", sum);
  return 0;
}
