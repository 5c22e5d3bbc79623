// big_blocks: 64 KiB..4 MiB blocks (log-uniform) that grow a live set, then
// are all released: ROUNDS rounds of BLOCKS blocks, allocated, touched
// once, then freed in reverse order.
// Big blocks are mmap'd by glibc, so the program's own cost per event is
// high and a tracer's share small.
//
//   big_blocks ROUNDS [BLOCKS]
#include <vector>

#include "workload.hpp"

namespace {

__attribute__((noinline)) void* big_alloc(std::size_t size) {
  void* p = std::malloc(size);
  workload::touch(p);
  return p;
}

std::uint64_t round_trip(workload::Rng& rng, std::vector<void*>& live) {
  std::uint64_t sum = 0;
  for (auto& p : live) {
    std::size_t size = workload::log_uniform_size(rng, 16, 22);
    p = big_alloc(size);
    sum += size;
  }
  for (auto it = live.rbegin(); it != live.rend(); ++it) std::free(*it);
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "big_blocks ROUNDS [BLOCKS]";
  workload::too_many_args(argc, 2, usage);
  long rounds = workload::arg(argc, argv, 1, 1000, usage);
  long blocks = workload::arg(argc, argv, 2, 64, usage);
  workload::Rng rng{0x626967ull};
  std::vector<void*> live(static_cast<std::size_t>(blocks));
  std::uint64_t sum = 0;
  for (long r = 0; r < rounds; ++r) sum = sum * 31 + round_trip(rng, live);
  workload::report("big_blocks", sum);
  return 0;
}
