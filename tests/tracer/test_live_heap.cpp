// LiveHeap (the writer's live heap map) against a std::map, on random runs
// whose addresses repeat often: immediate frees, lost frees (an alloc over
// a live address), frees of unknown addresses, address 0, and enough live
// blocks to make the table grow.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "live_heap.hpp"

namespace memtrail::runtime {
namespace {

void expect_same(const LiveHeap& heap, const std::map<std::uint64_t, LiveEntry>& ref) {
  std::map<std::uint64_t, LiveEntry> got;
  heap.for_each([&](std::uint64_t a, const LiveEntry& e) {
    EXPECT_TRUE(got.emplace(a, e).second) << "address listed twice: " << a;
  });
  ASSERT_EQ(got.size(), ref.size());
  EXPECT_EQ(heap.size(), ref.size());
  for (auto& [a, e] : ref) {
    auto it = got.find(a);
    ASSERT_NE(it, got.end()) << a;
    EXPECT_EQ(it->second.size, e.size);
    EXPECT_EQ(it->second.time_ns, e.time_ns);
  }
}

TEST(LiveHeap, RandomRunsAgreeWithAMap) {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    std::mt19937_64 rng(seed);
    LiveHeap heap;
    std::map<std::uint64_t, LiveEntry> ref;
    // Few distinct addresses in some runs (many lost frees and repeats),
    // many in others (the table grows).
    const std::uint64_t span = seed % 2 ? 64 : 20000;
    std::uint64_t last = 16;
    for (std::uint64_t t = 1; t <= 60000; ++t) {
      std::uint64_t r = rng();
      std::uint64_t a = (r % 8 == 0) ? 0 : 16 * (1 + (r >> 8) % span);
      if (r % 3 == 0) a = last;  // free (or re-alloc) what was just allocated
      if ((r >> 40) % 2 == 0 && !(seed == 2 && t > 30000)) {
        LiveEntry e{t * 8, t, static_cast<std::uint32_t>(t), 1, {}}, replaced{};
        bool had;
        LiveEntry* stored = heap.put(a, e, had, replaced);
        auto it = ref.find(a);
        ASSERT_EQ(had, it != ref.end()) << "seed " << seed << " t " << t;
        if (had) {
          EXPECT_EQ(replaced.time_ns, it->second.time_ns);
        }
        // The encoder writes the block's chunk place through the pointer.
        stored->chunk_ref = {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(t)};
        e.chunk_ref = stored->chunk_ref;
        ref[a] = e;
        last = a;
      } else {
        LiveEntry out{};
        bool found = heap.take(a, out);
        auto it = ref.find(a);
        ASSERT_EQ(found, it != ref.end()) << "seed " << seed << " t " << t;
        if (found) {
          EXPECT_EQ(out.time_ns, it->second.time_ns);
          EXPECT_EQ(out.chunk_ref.ordinal, it->second.chunk_ref.ordinal);
          ref.erase(it);
        }
      }
      if (t % 10000 == 0) expect_same(heap, ref);
    }
    expect_same(heap, ref);
  }
}

}  // namespace
}  // namespace memtrail::runtime
