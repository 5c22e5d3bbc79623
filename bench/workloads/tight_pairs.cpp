// tight_pairs: the cheapest event a tracer can see. One thread makes PAIRS
// malloc/free pairs of 16..64 B, each block freed at once, all from one
// call stack: a tracer's fixed cost per event, with nothing to intern.
//
//   tight_pairs PAIRS
#include "workload.hpp"

namespace {

__attribute__((noinline)) std::uint64_t pair(std::size_t size) {
  auto* p = static_cast<unsigned char*>(std::malloc(size));
  workload::touch(p);
  p[size - 1] = static_cast<unsigned char>(size);
  std::uint64_t last = p[size - 1];
  std::free(p);
  return last;
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "tight_pairs PAIRS";
  workload::too_many_args(argc, 1, usage);
  long pairs = workload::arg(argc, argv, 1, 1000000, usage);
  workload::Rng rng{0x7469676874ull};
  std::uint64_t sum = 0;
  for (long i = 0; i < pairs; ++i) sum = sum * 31 + pair(16 + rng.below(49));
  workload::report("tight_pairs", sum);
  return 0;
}
