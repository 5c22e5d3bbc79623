// fifo_new_delete: C++ new/delete with FIFO lifetimes. THREADS threads each
// create OBJECTS objects of 16..256 B (five types) into a ring of 4096;
// every new object deletes the oldest one, so blocks die in the order they
// were born, as in queues, caches and message buffers.
//
//   fifo_new_delete THREADS OBJECTS
#include <memory>
#include <thread>
#include <vector>

#include "workload.hpp"

namespace {

constexpr int kRing = 4096;

struct Object {
  virtual ~Object() = default;
  virtual std::uint64_t value() const = 0;
};

template <std::size_t Bytes>
struct Sized final : Object {
  unsigned char payload[Bytes] = {};
  explicit Sized(std::uint64_t seed) { payload[0] = static_cast<unsigned char>(seed); }
  std::uint64_t value() const override { return payload[0] + Bytes; }
};

__attribute__((noinline)) Object* make(std::uint64_t r) {
  switch (r % 5) {
    case 0:
      return new Sized<8>(r);
    case 1:
      return new Sized<24>(r);
    case 2:
      return new Sized<56>(r);
    case 3:
      return new Sized<120>(r);
    default:
      return new Sized<248>(r);
  }
}

std::uint64_t worker(int index, long objects) {
  workload::Rng rng{0x6669666full + static_cast<std::uint64_t>(index)};
  std::vector<std::unique_ptr<Object>> ring(kRing);
  std::uint64_t sum = 0;
  for (long i = 0; i < objects; ++i) {
    auto& slot = ring[static_cast<std::size_t>(i % kRing)];
    if (slot) sum += slot->value();
    slot.reset(make(rng.next()));  // deletes the oldest object
  }
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "fifo_new_delete THREADS OBJECTS";
  workload::too_many_args(argc, 2, usage);
  int threads = static_cast<int>(workload::arg(argc, argv, 1, 4, usage));
  long objects = workload::arg(argc, argv, 2, 1000000, usage);
  std::vector<std::uint64_t> sums(static_cast<std::size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back(
        [&sums, t, objects] { sums[static_cast<std::size_t>(t)] = worker(t, objects); });
  std::uint64_t sum = 0;
  for (int t = 0; t < threads; ++t) {
    pool[static_cast<std::size_t>(t)].join();
    sum = sum * 31 + sums[static_cast<std::size_t>(t)];
  }
  workload::report("fifo_new_delete", sum);
  return 0;
}
