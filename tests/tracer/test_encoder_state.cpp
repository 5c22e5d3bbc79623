// The writer's EncoderThreadState must take the same decisions as the
// format's ThreadCodecState (which the reader uses): same size slot, same
// alloc candidate index, same lists after every push and take. Any drift
// changes the encoded bytes, so this compares the two on long random runs
// with a small address space (many repeats, double frees, class changes).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "encoder_state.hpp"
#include "format_layout.hpp"

namespace memtrail::format {
namespace {

struct Twin {
  ThreadCodecState ref;
  EncoderThreadState enc;
};

TEST(EncoderState, SizeCacheFindsTheSameSlots) {
  auto twin = std::make_unique<Twin>();
  std::mt19937_64 rng(1);
  for (int i = 0; i < 200000; ++i) {
    // Few distinct sizes (hits), some with equal low 32 bits (SSE2 false candidates).
    std::uint64_t size = 1 + rng() % 48;
    if (rng() % 4 == 0) size += std::uint64_t{1 + rng() % 3} << 32;
    int a = twin->ref.find_size(size), b = twin->enc.find_size(size);
    ASSERT_EQ(a, b) << "event " << i << " size " << size;
    if (a < 0) {
      twin->ref.last_address = twin->enc.last_address = rng();
      ASSERT_EQ(twin->ref.insert_size(size), twin->enc.insert_size(size)) << i;
      ASSERT_EQ(twin->ref.slot_address, twin->enc.slot_address) << i;
    }
  }
}

TEST(EncoderState, AllocCandidatesAndFreeListsAgree) {
  for (std::uint64_t seed : {1u, 2u, 3u, 4u}) {
    auto twin = std::make_unique<Twin>();
    std::mt19937_64 rng(seed);
    // 2^(6+seed) addresses: from heavy reuse to frees leaving the 1024 window.
    const std::uint64_t spread = std::uint64_t{1} << (6 + 2 * seed);
    int refs = 0;
    for (int i = 0; i < 300000; ++i) {
      std::uint64_t address = 0x10000 + (rng() % spread) * 16;
      std::uint64_t size = rng() % 3 == 0 ? 0 : 8 + rng() % 2000;
      if (rng() % 2 == 0) {  // a free: size 0 = unknown size (class list untouched)
        twin->ref.push_freed(address, size);
        twin->enc.push_freed(address, size);
        continue;
      }
      std::uint64_t cls = chunk_class(size);
      std::uint64_t expected = 0, got = 0;
      bool found = AllocCandidates(twin->ref, cls).index_of(address, expected);
      twin->ref.take_freed(cls, address);
      bool enc_found = twin->enc.alloc_index_and_take(cls, address, got);
      ASSERT_EQ(found, enc_found) << "seed " << seed << " event " << i;
      if (found) {
        ASSERT_EQ(expected, got) << "seed " << seed << " event " << i;
        ++refs;
      }
      twin->ref.push_fresh(address + cls);
      twin->enc.push_fresh(address + cls);
    }
    EXPECT_GT(refs, 1000) << "seed " << seed << ": the run must exercise the candidates";
  }
}

// Frees of distinct addresses, then allocs of those freed just inside and
// just outside the 1024-entry window, at every offset around the boundary
// and after the ring has wrapped several times.
TEST(EncoderState, RecentFreesWindowEdges) {
  for (int pushes : {1023, 1024, 1025, 2048, 5000}) {
    for (int back = 1015; back <= 1030; ++back) {
      auto twin = std::make_unique<Twin>();
      for (int i = 0; i < pushes; ++i) {
        std::uint64_t a = 0x100000 + static_cast<std::uint64_t>(i) * 4096;
        twin->ref.push_freed(a, 0);  // size unknown: only RecentFrees holds it
        twin->enc.push_freed(a, 0);
      }
      if (back > pushes) continue;
      std::uint64_t a = 0x100000 + static_cast<std::uint64_t>(pushes - back) * 4096;
      std::uint64_t cls = chunk_class(64), expected = 0, got = 0;
      bool found = AllocCandidates(twin->ref, cls).index_of(a, expected);
      twin->ref.take_freed(cls, a);
      ASSERT_EQ(found, twin->enc.alloc_index_and_take(cls, a, got))
          << pushes << " pushes, freed " << back << " ago";
      if (found) {
        ASSERT_EQ(expected, got) << pushes << " pushes, freed " << back << " ago";
      }
      EXPECT_EQ(found, back <= kRecentFrees) << pushes << " pushes, freed " << back << " ago";
    }
  }
}

}  // namespace
}  // namespace memtrail::format
