// PyTorch's text, byte for byte: memory_summary() (expected tables produced
// by torch/cuda/memory.py's memory_summary, run in Python over the same
// stats), the OOM message and format_size.
#include <gtest/gtest.h>

#include "memtrail/alloc/caching_pool.hpp"
#include "memtrail/alloc/virtual_resource.hpp"

namespace {

using namespace memtrail::alloc;
constexpr std::uint64_t kMiB = 1ull << 20;

// A DeviceStats with large values: MiB, GiB, B units and K/M counts.
inline memtrail::alloc::DeviceStats make_big_stats() {
  using namespace memtrail::alloc;
  DeviceStats s;
  std::int64_t seed = 1;
  auto fill = [&](StatArray& a, std::int64_t scale) {
    for (Stat& x : a) {
      x.current = seed * scale;
      x.peak = (seed + 1) * scale * 3 / 2;
      x.allocated = (seed + 2) * scale * 5;
      x.freed = x.allocated - x.current;
      ++seed;
    }
  };
  fill(s.allocated_bytes, 3ll << 30);
  fill(s.active_bytes, 700ll << 20);
  fill(s.requested_bytes, 123456789);
  fill(s.reserved_bytes, 80ll << 30);
  fill(s.inactive_split_bytes, 1000);
  fill(s.allocation, 400000);
  fill(s.active, 1000);
  fill(s.segment, 7);
  fill(s.inactive_split, 123456789);
  s.oversize_allocations = {800000, 900000, 2000000, 1200000};
  s.oversize_segments = {3, 4, 5, 2};
  s.num_ooms = 12;
  s.num_alloc_retries = 345;
  return s;
}

// After A..E of the worked replay (reference §1.8, before empty_cache).
const char* kWorkedSummary =
    R"(|===========================================================================|
|                  PyTorch CUDA memory summary, device ID 0                 |
|---------------------------------------------------------------------------|
|            CUDA OOMs: 0            |        cudaMalloc retries: 0         |
|===========================================================================|
|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |
|---------------------------------------------------------------------------|
| Allocated memory      |  24578 KiB |  39937 KiB |  39938 KiB |  15360 KiB |
|       from large pool |  24576 KiB |  39936 KiB |  39936 KiB |  15360 KiB |
|       from small pool |      2 KiB |      2 KiB |      2 KiB |      0 KiB |
|---------------------------------------------------------------------------|
| Active memory         |  24578 KiB |  39937 KiB |  39938 KiB |  15360 KiB |
|       from large pool |  24576 KiB |  39936 KiB |  39936 KiB |  15360 KiB |
|       from small pool |      2 KiB |      2 KiB |      2 KiB |      0 KiB |
|---------------------------------------------------------------------------|
| Requested memory      |  24416 KiB |  39775 KiB |  39776 KiB |  15360 KiB |
|       from large pool |  24414 KiB |  39774 KiB |  39774 KiB |  15360 KiB |
|       from small pool |      1 KiB |      1 KiB |      1 KiB |      0 KiB |
|---------------------------------------------------------------------------|
| GPU reserved memory   |  47104 KiB |  47104 KiB |  47104 KiB |      0 B   |
|       from large pool |  45056 KiB |  45056 KiB |  45056 KiB |      0 B   |
|       from small pool |   2048 KiB |   2048 KiB |   2048 KiB |      0 B   |
|---------------------------------------------------------------------------|
| Non-releasable memory |   2046 KiB |  19455 KiB |  22527 KiB |  20481 KiB |
|       from large pool |      0 KiB |  17408 KiB |  20480 KiB |  20480 KiB |
|       from small pool |   2046 KiB |   2047 KiB |   2047 KiB |      1 KiB |
|---------------------------------------------------------------------------|
| Allocations           |       3    |       4    |       5    |       2    |
|       from large pool |       1    |       3    |       3    |       2    |
|       from small pool |       2    |       2    |       2    |       0    |
|---------------------------------------------------------------------------|
| Active allocs         |       3    |       4    |       5    |       2    |
|       from large pool |       1    |       3    |       3    |       2    |
|       from small pool |       2    |       2    |       2    |       0    |
|---------------------------------------------------------------------------|
| GPU reserved segments |       3    |       3    |       3    |       0    |
|       from large pool |       2    |       2    |       2    |       0    |
|       from small pool |       1    |       1    |       1    |       0    |
|---------------------------------------------------------------------------|
| Non-releasable allocs |       1    |       3    |       3    |       2    |
|       from large pool |       0    |       2    |       2    |       2    |
|       from small pool |       1    |       1    |       1    |       0    |
|---------------------------------------------------------------------------|
| Oversize allocations  |       0    |       0    |       0    |       0    |
|---------------------------------------------------------------------------|
| Oversize GPU segments |       0    |       0    |       0    |       0    |
|===========================================================================|
)";

const char* kBigSummary =
    R"(|===========================================================================|
|                  PyTorch CUDA memory summary, device ID 0                 |
|---------------------------------------------------------------------------|
|            CUDA OOMs: 12           |        cudaMalloc retries: 345       |
|===========================================================================|
|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |
|---------------------------------------------------------------------------|
| Allocated memory      |   3072 MiB |   9216 MiB |  46080 MiB |  43008 MiB |
|       from large pool |   9216 MiB |  18432 MiB |  76800 MiB |  67584 MiB |
|       from small pool |   6144 MiB |  13824 MiB |  61440 MiB |  55296 MiB |
|---------------------------------------------------------------------------|
| Active memory         |   2800 MiB |   5250 MiB |  21000 MiB |  18200 MiB |
|       from large pool |   4200 MiB |   7350 MiB |  28000 MiB |  23800 MiB |
|       from small pool |   3500 MiB |   6300 MiB |  24500 MiB |  21000 MiB |
|---------------------------------------------------------------------------|
| Requested memory      |    824 MiB |   1412 MiB |   5298 MiB |   4474 MiB |
|       from large pool |   1059 MiB |   1766 MiB |   6475 MiB |   5415 MiB |
|       from small pool |    941 MiB |   1589 MiB |   5886 MiB |   4944 MiB |
|---------------------------------------------------------------------------|
| GPU reserved memory   |    800 GiB |   1320 GiB |   4800 GiB |   4000 GiB |
|       from large pool |    960 GiB |   1560 GiB |   5600 GiB |   4640 GiB |
|       from small pool |    880 GiB |   1440 GiB |   5200 GiB |   4320 GiB |
|---------------------------------------------------------------------------|
| Non-releasable memory |  13000 B   |  21000 B   |  75000 B   |  62000 B   |
|       from large pool |  15000 B   |  24000 B   |  85000 B   |  70000 B   |
|       from small pool |  14000 B   |  22500 B   |  80000 B   |  66000 B   |
|---------------------------------------------------------------------------|
| Allocations           |    6400 K  |   10200 K  |   36000 K  |   29600 K  |
|       from large pool |    7200 K  |   11400 K  |   40000 K  |   32800 K  |
|       from small pool |    6800 K  |   10800 K  |   38000 K  |   31200 K  |
|---------------------------------------------------------------------------|
| Active allocs         |   19000    |   30000    |  105000    |   86000    |
|       from large pool |   21000    |   33000    |  115000    |   94000    |
|       from small pool |   20000    |   31500    |  110000    |   90000    |
|---------------------------------------------------------------------------|
| GPU reserved segments |     154    |     241    |     840    |     686    |
|       from large pool |     168    |     262    |     910    |     742    |
|       from small pool |     161    |     252    |     875    |     714    |
|---------------------------------------------------------------------------|
| Non-releasable allocs |    3086 M  |    4814 M  |   16666 M  |   13580 M  |
|       from large pool |    3333 M  |    5185 M  |   17901 M  |   14567 M  |
|       from small pool |    3209 M  |    4999 M  |   17283 M  |   14074 M  |
|---------------------------------------------------------------------------|
| Oversize allocations  |     800 K  |     900 K  |    2000 K  |    1200 K  |
|---------------------------------------------------------------------------|
| Oversize GPU segments |       3    |       4    |       5    |       2    |
|===========================================================================|
)";

const char* kBigAbbreviated =
    R"(|===========================================================================|
|                  PyTorch CUDA memory summary, device ID 0                 |
|---------------------------------------------------------------------------|
|            CUDA OOMs: 12           |        cudaMalloc retries: 345       |
|===========================================================================|
|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |
|---------------------------------------------------------------------------|
| Allocated memory      |   3072 MiB |   9216 MiB |  46080 MiB |  43008 MiB |
|---------------------------------------------------------------------------|
| Active memory         |   2800 MiB |   5250 MiB |  21000 MiB |  18200 MiB |
|---------------------------------------------------------------------------|
| Requested memory      |    824 MiB |   1412 MiB |   5298 MiB |   4474 MiB |
|---------------------------------------------------------------------------|
| GPU reserved memory   |    800 GiB |   1320 GiB |   4800 GiB |   4000 GiB |
|---------------------------------------------------------------------------|
| Non-releasable memory |  13000 B   |  21000 B   |  75000 B   |  62000 B   |
|---------------------------------------------------------------------------|
| Allocations           |    6400 K  |   10200 K  |   36000 K  |   29600 K  |
|---------------------------------------------------------------------------|
| Active allocs         |   19000    |   30000    |  105000    |   86000    |
|---------------------------------------------------------------------------|
| GPU reserved segments |     154    |     241    |     840    |     686    |
|---------------------------------------------------------------------------|
| Non-releasable allocs |    3086 M  |    4814 M  |   16666 M  |   13580 M  |
|---------------------------------------------------------------------------|
| Oversize allocations  |     800 K  |     900 K  |    2000 K  |    1200 K  |
|---------------------------------------------------------------------------|
| Oversize GPU segments |       3    |       4    |       5    |       2    |
|===========================================================================|
)";

TEST(MemorySummary, WorkedReplayStateMatchesPyTorch) {
  VirtualResource device;
  CachingPool pool(device, CachingConfig{});
  void* a = pool.malloc(1000);
  void* b = pool.malloc(3 * kMiB);
  void* c = pool.malloc(12 * kMiB);
  void* d = pool.malloc(25000000);
  pool.free(b);
  pool.free(c);
  void* e = pool.malloc(1000);
  EXPECT_EQ(pool.memory_summary(), kWorkedSummary);
  pool.free(a);
  pool.free(d);
  pool.free(e);
}

TEST(MemorySummary, UnitsAndCountsMatchPyTorch) {
  EXPECT_EQ(memory_summary(make_big_stats(), 0), kBigSummary);
  EXPECT_EQ(memory_summary(make_big_stats(), 0, /*abbreviated=*/true), kBigAbbreviated);
}

TEST(OomText, FormatSize) {
  EXPECT_EQ(pytorch_format_size(0), "0 bytes");
  EXPECT_EQ(pytorch_format_size(1024), "1024 bytes");
  EXPECT_EQ(pytorch_format_size(1025), "1.00 KiB");
  EXPECT_EQ(pytorch_format_size(1048576), "1024.00 KiB");
  EXPECT_EQ(pytorch_format_size(1048577), "1.00 MiB");
  EXPECT_EQ(pytorch_format_size(1ull << 30), "1024.00 MiB");
  EXPECT_EQ(pytorch_format_size(3ull << 29), "1.50 GiB");
}

TEST(OomText, MessageForAConstructedState) {
  VirtualResource device(64 * kMiB);
  CachingPool pool(device, CachingConfig{});
  void* a = pool.malloc(50 * kMiB);
  void* b = pool.malloc(1000);
  try {
    pool.malloc(3 * kMiB);  // the report names the segment size: 20 MiB
    ADD_FAILURE() << "no OOM";
  } catch (const OutOfMemoryError& e) {
    EXPECT_STREQ(e.what(),
                 "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
                 "64.00 MiB of which 12.00 MiB is free. Of the allocated memory 50.00 MiB is "
                 "allocated by PyTorch, and 2.00 MiB is reserved by PyTorch but unallocated. If "
                 "reserved but unallocated memory is large try setting "
                 "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
                 "documentation for Memory Management  "
                 "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)");
  }
  pool.set_memory_fraction(0.75);
  try {
    pool.malloc(10 * kMiB);
    ADD_FAILURE() << "no OOM";
  } catch (const OutOfMemoryError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("Tried to allocate 10.00 MiB. GPU 0 has a total capacity of 64.00 MiB of "
                        "which 12.00 MiB is free. 48.00 MiB allowed; Of the allocated memory "),
              std::string::npos)
        << what;
  }
  EXPECT_EQ(pool.memory_stats().at("num_ooms"), 2);
  pool.free(a);
  pool.free(b);
}

}  // namespace
