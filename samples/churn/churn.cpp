// churn: the allocation-churn workload shared by the benchmarks.
//
//   churn [PAIRS]          (default 2,000,000 malloc/free pairs)
//
// Modeled on the heaptrack measurement in reference/heaptrack-bytehound.md §2,
// with more call paths: 2 threads each make PAIRS/2 malloc/free pairs with
// sizes 8 B..64 KiB from a fixed-seed generator, allocated from call depths
// 2..20 (a different depth for each allocation). Even-numbered allocations
// are freed at once; odd ones go through a 256-slot ring, freed 256
// allocations later. Then main leaks exactly 357 blocks, 570,752 bytes:
// 100 x 1000 B, 250 x 48 B and 7 x 65536 B, from three distinct sites.
//
// Deterministic: the same PAIRS gives the same sizes, depths and order per
// thread; the output is one line with a checksum, identical on every run.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace {

constexpr int kRingSlots = 256;
constexpr int kMinDepth = 2;
constexpr int kMaxDepth = 20;

// splitmix64: tiny, fast and fixed-seed, so every run allocates the same.
struct Rng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

// Sizes 8 B..64 KiB, log-uniform, so small blocks dominate as in real code.
std::size_t pick_size(Rng& rng) {
  std::uint64_t r = rng.next();
  unsigned shift = 3 + static_cast<unsigned>(r % 14);  // 2^3 .. 2^16
  std::size_t size = std::size_t{1} << shift;
  return size - ((r >> 8) % (size / 2 + 1));  // 8 .. 65536, never below 4
}

// The allocation site, reached through `depth` frames of descend(). The
// empty asm keeps the compiler from merging or dropping frames.
__attribute__((noinline)) void* leaf_alloc(std::size_t size) {
  void* p = std::malloc(size);
  if (p == nullptr) std::abort();
  static_cast<volatile char*>(p)[0] = 1;  // touch it, as a real program would
  asm volatile("" ::: "memory");
  return p;
}

__attribute__((noinline)) void* descend(int depth, std::size_t size) {
  void* p = depth <= 1 ? leaf_alloc(size) : descend(depth - 1, size);
  asm volatile("" ::: "memory");
  return p;
}

struct Totals {
  std::uint64_t bytes = 0;
  std::uint64_t checksum = 0;
};

void churn_thread(std::uint64_t seed, long pairs, Totals* out) {
  Rng rng{seed};
  void* ring[kRingSlots] = {};
  long slot = 0;
  Totals t;
  for (long i = 0; i < pairs; ++i) {
    std::size_t size = pick_size(rng);
    int depth = kMinDepth + static_cast<int>(rng.next() % (kMaxDepth - kMinDepth + 1));
    // descend(d) plus leaf_alloc makes d + 1 frames under churn_thread.
    void* p = descend(depth - 1, size);
    t.bytes += size;
    t.checksum = t.checksum * 31 + size + static_cast<std::uint64_t>(depth);
    if (i % 2 == 0) {
      std::free(p);
    } else {
      std::free(ring[slot]);  // free(nullptr) while the ring fills
      ring[slot] = p;
      slot = (slot + 1) % kRingSlots;
    }
  }
  for (void* p : ring) std::free(p);
  *out = t;
}

// Three leak sites, each its own function so reports show three call sites.
// The pointers are dropped on purpose.
__attribute__((noinline)) void leak_site_a() {
  for (int i = 0; i < 100; ++i) static_cast<volatile char*>(leaf_alloc(1000))[1] = 0;
}
__attribute__((noinline)) void leak_site_b() {
  for (int i = 0; i < 250; ++i) static_cast<volatile char*>(leaf_alloc(48))[1] = 0;
}
__attribute__((noinline)) void leak_site_c() {
  for (int i = 0; i < 7; ++i) static_cast<volatile char*>(leaf_alloc(65536))[1] = 0;
}

// Overwrites the dead stack below main's frame so no stale copy of a leaked
// pointer survives there (a conservative scanner would count it as a root).
__attribute__((noinline)) void scrub_stack() {
  volatile char buffer[64 * 1024];
  for (auto& c : buffer) c = 0;
}

}  // namespace

int main(int argc, char** argv) {
  long pairs = 2'000'000;
  if (argc > 1) {
    char* end = nullptr;
    pairs = std::strtol(argv[1], &end, 10);
    if (*argv[1] == '\0' || *end != '\0' || pairs < 0) {
      std::fprintf(stderr, "churn: PAIRS must be a non-negative integer, got '%s'\n", argv[1]);
      return 2;
    }
  }
  Totals first, second;
  std::thread a(churn_thread, 0x6d656d747261696cull, pairs / 2, &first);
  std::thread b(churn_thread, 0x636875726e000002ull, pairs - pairs / 2, &second);
  a.join();
  b.join();
  leak_site_a();
  leak_site_b();
  leak_site_c();
  scrub_stack();
  std::printf("churn: %ld pairs, %llu bytes, checksum %016llx, leaked 357 blocks 570752 bytes\n",
              pairs, static_cast<unsigned long long>(first.bytes + second.bytes),
              static_cast<unsigned long long>(first.checksum ^ second.checksum));
  return 0;
}
