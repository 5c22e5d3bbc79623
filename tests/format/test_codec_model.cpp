// The codec's one prediction model (tracer/src/codec/thread_model.hpp), in
// both of its instantiations, must take the decisions of the plain
// reference model (reference_model.hpp): the encoder (FindByValue) the same
// size slot and alloc candidate index, the decoder (ReadByPosition) the same
// address for every index, both the same lists after every push and take.
// Any drift changes the encoded bytes or the decoded events, so this runs
// them side by side on long random runs with a small address space (many
// repeats, double frees, class changes, indexes out of range), the decoder
// reused across runs through reset() as the reader does per chunk.
//
// Built at MEMTRAIL_ASSERT_LEVEL 3 (tests/format/CMakeLists.txt), without
// the format library, so every invariant check of the model runs here.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>

#include "codec/thread_model.hpp"
#include "format_layout.hpp"
#include "reference_model.hpp"

namespace memtrail::format {
namespace {

using reference::AllocCandidates;
using reference::ThreadCodecState;

static_assert(MEMTRAIL_ASSERT_LEVEL == 3, "this test runs the model's expensive checks");

int bucket(std::uint64_t cls) {
  return codec::ClassFrees::bucket_of(cls);
}

bool address_at(const DecoderThreadState& dec, std::uint64_t cls, std::uint64_t index,
                std::uint64_t& address) {
  return dec.alloc_address_at(bucket(cls), cls, index, address);
}

struct Twin {
  ThreadCodecState ref;
  EncoderThreadState enc;
};

TEST(EncoderModel, SizeCacheFindsTheSameSlots) {
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

TEST(EncoderModel, AllocCandidatesAndFreeListsAgree) {
  for (std::uint64_t seed : {1u, 2u, 3u, 4u}) {
    auto twin = std::make_unique<Twin>();
    std::mt19937_64 rng(seed);
    // 2^(6+seed) addresses: from heavy reuse to frees leaving the 1024 window.
    const std::uint64_t spread = std::uint64_t{1} << (6 + 2 * seed);
    int refs = 0;
    for (int i = 0; i < 100000; ++i) {
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
TEST(EncoderModel, RecentFreesWindowEdges) {
  for (int pushes : {1023, 1024, 1025, 2048, 5000}) {
    for (int back = 1015; back <= 1030; ++back) {
      if (back > pushes) continue;
      auto twin = std::make_unique<Twin>();
      for (int i = 0; i < pushes; ++i) {
        std::uint64_t a = 0x100000 + static_cast<std::uint64_t>(i) * 4096;
        twin->ref.push_freed(a, 0);  // size unknown: only RecentFrees holds it
        twin->enc.push_freed(a, 0);
      }
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

// Compares every candidate index of class `cls` up to past the end of the
// recent frees, as a decoder could be asked by a valid or hostile trace.
void expect_same_candidates(ThreadCodecState& ref, const DecoderThreadState& dec, std::uint64_t cls,
                            const char* where, int step) {
  for (std::uint64_t index = 0; index < kClassDepth + kFreshEnds + kRecentFrees + 2; ++index) {
    std::uint64_t a = 1, b = 2;
    bool ok_ref = AllocCandidates(ref, cls).address_at(index, a);
    bool ok_dec = address_at(dec, cls, index, b);
    ASSERT_EQ(ok_ref, ok_dec) << where << " step " << step << " index " << index;
    if (ok_ref) {
      ASSERT_EQ(a, b) << where << " step " << step << " index " << index;
    }
  }
}

TEST(DecoderModel, AllocCandidatesAndFreeListsAgree) {
  auto dec = std::make_unique<DecoderThreadState>();
  for (std::uint64_t seed : {1u, 2u, 3u, 4u, 5u}) {
    auto ref = std::make_unique<ThreadCodecState>();
    dec->reset();  // reused across runs, like the reader's per-chunk reset
    std::mt19937_64 rng(seed);
    // 2^(6+2*seed) addresses: from heavy reuse to frees leaving the 1024 window.
    const std::uint64_t spread = std::uint64_t{1} << (6 + 2 * seed);
    int refs = 0, full_checks = 0;
    for (int i = 0; i < 100000; ++i) {
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
        ASSERT_EQ(ok_ref, address_at(*dec, cls, index, b))
            << "seed " << seed << " event " << i << " index " << index;
        if (!ok_ref) continue;
        ASSERT_EQ(a, b) << "seed " << seed << " event " << i << " index " << index;
        address = a;
        ++refs;
      } else {
        address = 0x10000 + (rng() % spread) * 16;  // coded by delta
      }
      ref->take_freed(cls, address);
      dec->take_freed(bucket(cls), cls, address);
      ref->push_fresh(address + cls);
      dec->push_fresh(address + cls);
      if (i % 4999 == 0) {
        expect_same_candidates(*ref, *dec, cls, "full", i);
        ++full_checks;
      }
    }
    EXPECT_GT(refs, 5000) << "seed " << seed << ": the run must exercise the candidates";
    EXPECT_GT(full_checks, 5);
  }
}

TEST(DecoderModel, SizeSlotsAndStacksAgree) {
  auto ref = std::make_unique<ThreadCodecState>();
  auto dec = std::make_unique<DecoderThreadState>();
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100000; ++i) {
    ref->last_address = dec->last_address = rng();
    std::uint64_t size = 1 + rng() % 100;
    ASSERT_EQ(ref->insert_size(size), dec->insert_size(size)) << i;
    for (int s = 0; s < kSizeSlots; ++s) ASSERT_EQ(ref->slot_size[s], dec->slot_size[s]) << i;
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
TEST(DecoderModel, RecentFreesWindowEdges) {
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
      dec->take_freed(bucket(chunk_class(64)), chunk_class(64), a);
    }
    expect_same_candidates(*ref, *dec, chunk_class(64), "taken", pushes);
  }
}

// The encoder's index of an address, given to the decoder in the same
// state, names that address again: the two directions are one model.
TEST(CodecModel, DecoderInvertsTheEncoder) {
  auto enc = std::make_unique<EncoderThreadState>();
  auto dec = std::make_unique<DecoderThreadState>();
  std::mt19937_64 rng(11);
  int refs = 0;
  for (int i = 0; i < 100000; ++i) {
    std::uint64_t address = 0x20000 + (rng() % 4096) * 16;
    std::uint64_t size = rng() % 4 == 0 ? 0 : 8 + rng() % 3000;
    if (rng() % 2 == 0) {
      enc->push_freed(address, size);
      dec->push_freed(address, size);
      continue;
    }
    std::uint64_t cls = chunk_class(size), index = 0, decoded = 0;
    if (enc->alloc_index_and_take(cls, address, index)) {
      ASSERT_TRUE(address_at(*dec, cls, index, decoded)) << i;
      ASSERT_EQ(decoded, address) << "event " << i << " index " << index;
      ++refs;
    }
    dec->take_freed(bucket(cls), cls, address);
    enc->push_fresh(address + cls);
    dec->push_fresh(address + cls);
  }
  EXPECT_GT(refs, 10000);
}

// The checks are on here: a broken invariant aborts with its condition.
// The writer holds one state for each thread of a chunk (64 threads in
// cross-thread-64's chunks), the reader one per thread it decodes: the
// recent frees' index holds 2-byte ring positions, not addresses and
// sequence numbers (~70 KiB a thread before, 4.4 MiB at 64 threads).
TEST(CodecModel, OneThreadsStateStaysUnder52KiB) {
  EXPECT_LE(sizeof(EncoderThreadState), 52u * 1024);
  EXPECT_LE(sizeof(DecoderThreadState), 52u * 1024);
}

TEST(CodecModelDeathTest, TakingAnAbsentClassEntryAborts) {
  auto dec = std::make_unique<DecoderThreadState>();
  std::uint64_t cls = chunk_class(64);
  dec->push_freed(0x1000, 64);
  EXPECT_DEATH(dec->classes.take_rank(bucket(cls), 1),
               "assertion failed: rank >= 0 && rank < h.count");
}

}  // namespace
}  // namespace memtrail::format
