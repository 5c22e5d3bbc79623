// The reader's DecoderThreadState must take the same decisions as the
// format's ThreadCodecState (the reference, which the writer's twin is also
// checked against): the same address for every alloc candidate index, the
// same lists after every push and take. Any drift changes decoded events, so
// this runs both on long random sequences with a small address space (many
// repeats, double frees, class changes, indexes out of range) and reuses one
// decoder state across runs through reset(), as the reader does per chunk.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>

#include "decoder_state.hpp"
#include "format_layout.hpp"

namespace memtrail::format {
namespace {

// Compares every candidate index of class `cls` up to past the end of the
// recent frees, as a decoder could be asked by a valid or hostile trace.
void expect_same_candidates(ThreadCodecState& ref, const DecoderThreadState& dec, std::uint64_t cls,
                            const char* where, int step) {
  for (std::uint64_t index = 0; index < kClassDepth + kFreshEnds + kRecentFrees + 2; ++index) {
    std::uint64_t a = 1, b = 2;
    bool ok_ref = AllocCandidates(ref, cls).address_at(index, a);
    bool ok_dec = dec.alloc_address_at(cls, index, b);
    ASSERT_EQ(ok_ref, ok_dec) << where << " step " << step << " index " << index;
    if (ok_ref) {
      ASSERT_EQ(a, b) << where << " step " << step << " index " << index;
    }
  }
}

TEST(DecoderState, AllocCandidatesAndFreeListsAgree) {
  auto dec = std::make_unique<DecoderThreadState>();
  for (std::uint64_t seed : {1u, 2u, 3u, 4u, 5u}) {
    auto ref = std::make_unique<ThreadCodecState>();
    dec->reset();  // reused across runs, like the reader's per-chunk reset
    std::mt19937_64 rng(seed);
    // 2^(6+2*seed) addresses: from heavy reuse to frees leaving the 1024 window.
    const std::uint64_t spread = std::uint64_t{1} << (6 + 2 * seed);
    int refs = 0, full_checks = 0;
    for (int i = 0; i < 200000; ++i) {
      std::uint64_t size = rng() % 3 == 0 ? 0 : 8 + rng() % (seed == 5 ? 40000 : 2000);
      std::uint64_t cls = chunk_class(size);
      if (rng() % 2 == 0) {  // a free: size 0 = unknown size (class list untouched)
        std::uint64_t address = 0x10000 + (rng() % spread) * 16;
        ref->push_freed(address, size);
        dec->push_freed(address, size);
        continue;
      }
      std::uint64_t address;
      if (rng() % 4 != 0) {
        // An alloc coded by reference: a random candidate index, biased
        // small, sometimes out of range.
        std::uint64_t index = rng() % 8 == 0 ? rng() % (kRecentFrees + 200) : rng() % 24;
        std::uint64_t a = 0, b = 0;
        bool ok_ref = AllocCandidates(*ref, cls).address_at(index, a);
        ASSERT_EQ(ok_ref, dec->alloc_address_at(cls, index, b))
            << "seed " << seed << " event " << i << " index " << index;
        if (!ok_ref) continue;
        ASSERT_EQ(a, b) << "seed " << seed << " event " << i << " index " << index;
        address = a;
        ++refs;
      } else {
        address = 0x10000 + (rng() % spread) * 16;  // coded by delta
      }
      ref->take_freed(cls, address);
      dec->take_freed(cls, address);
      ref->push_fresh(address + cls);
      dec->push_fresh(address + cls);
      if (i % 9973 == 0) {
        expect_same_candidates(*ref, *dec, cls, "full", i);
        ++full_checks;
      }
    }
    EXPECT_GT(refs, 10000) << "seed " << seed << ": the run must exercise the candidates";
    EXPECT_GT(full_checks, 5);
  }
}

TEST(DecoderState, SizeSlotsAndStacksAgree) {
  auto ref = std::make_unique<ThreadCodecState>();
  auto dec = std::make_unique<DecoderThreadState>();
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100000; ++i) {
    ref->last_address = dec->last_address = rng();
    std::uint64_t size = 1 + rng() % 100;
    ASSERT_EQ(ref->insert_size(size), dec->insert_size(size)) << i;
    ASSERT_EQ(ref->slot_size, dec->slot_size) << i;
    ASSERT_EQ(ref->slot_address, dec->slot_address) << i;
    int kind = 1 + static_cast<int>(rng() % (kEventKindCount - 1));
    std::uint64_t code = rng() % 4 == 0 ? 0 : rng() % 6;
    if (rng() % 100 == 0) code = std::uint64_t{1} << 33;  // out of range
    std::uint32_t a = 0, b = 0;
    bool ok = ref->stack_of_code(kind, code, a);
    ASSERT_EQ(ok, dec->stack_of_code(kind, code, b)) << i;
    if (!ok) continue;
    ASSERT_EQ(a, b) << i;
    ref->set_stack(kind, a);
    dec->set_stack(kind, b);
    ASSERT_EQ(ref->last_stack, dec->last_stack) << i;
    ASSERT_EQ(ref->prev_stack, dec->prev_stack) << i;
  }
}

// Frees of distinct addresses, then the candidate indexes around the edge of
// the 1024-entry window, after the ring has wrapped several times, and after
// a reset of a state that held the same addresses.
TEST(DecoderState, RecentFreesWindowEdges) {
  auto dec = std::make_unique<DecoderThreadState>();
  for (int pushes : {1, 1023, 1024, 1025, 2048, 5000}) {
    auto ref = std::make_unique<ThreadCodecState>();
    dec->reset();
    for (int i = 0; i < pushes; ++i) {
      std::uint64_t a = 0x100000 + static_cast<std::uint64_t>(i) * 4096;
      ref->push_freed(a, 0);
      dec->push_freed(a, 0);
    }
    expect_same_candidates(*ref, *dec, chunk_class(64), "edges", pushes);
    // Take every third of the newest 1100 frees, then compare again.
    for (int back = 1; back <= 1100 && back <= pushes; back += 3) {
      std::uint64_t a = 0x100000 + static_cast<std::uint64_t>(pushes - back) * 4096;
      ref->take_freed(chunk_class(64), a);
      dec->take_freed(chunk_class(64), a);
    }
    expect_same_candidates(*ref, *dec, chunk_class(64), "taken", pushes);
  }
}

}  // namespace
}  // namespace memtrail::format
