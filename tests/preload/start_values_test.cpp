// A root word that still holds the value it held when the tracer started
// cannot point at a block allocated since (start_values.hpp): a small array
// stands for a module's writable segment, blocks' ages for their order.
#include "start_values.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "reachability.hpp"

namespace memtrail::preload {
namespace {

using u64 = std::uint64_t;

struct Segment {
  u64 words[8] = {};
  char* block = static_cast<char*>(std::malloc(1000));
  Segment() {
    words[0] = 0;                                   // never remembered
    words[1] = reinterpret_cast<u64>(&words[3]);    // inside an "image"
    words[2] = reinterpret_cast<u64>(block) + 100;  // an integer inside the block
    words[3] = reinterpret_cast<u64>(block);        // the block's start
    words[4] = 0x1234;                              // a plain integer
  }
  ~Segment() { std::free(block); }
  MemoryRange range() const {
    return {reinterpret_cast<std::uintptr_t>(words), reinterpret_cast<std::uintptr_t>(words + 8)};
  }
  MemoryRange word(int i) const {
    return {reinterpret_cast<std::uintptr_t>(&words[i]),
            reinterpret_cast<std::uintptr_t>(&words[i + 1])};
  }
  std::uintptr_t at(int i) const { return reinterpret_cast<std::uintptr_t>(&words[i]); }
};

StartSnapshot snapshot_of(const Segment& s, std::uint64_t last_age) {
  SelfMemoryReader reader;
  MemoryRange range = s.range();
  MemoryRange image = range;  // the segment itself stands for a module image
  return StartSnapshot(candidate_start_words(std::span(&range, 1), std::span(&image, 1), reader),
                       last_age);
}

TEST(StartValues, RemembersTheWordsThatCouldEqualALaterBlock) {
  Segment s;
  StartSnapshot snapshot = snapshot_of(s, 7);
  EXPECT_EQ(snapshot.size(), 3u);  // words 2, 3 and 4
  EXPECT_EQ(snapshot.last_age(), 7u);
  EXPECT_FALSE(snapshot.held_at_start(s.at(0), 0));
  EXPECT_FALSE(snapshot.held_at_start(s.at(1), s.words[1]));
  EXPECT_TRUE(snapshot.held_at_start(s.at(2), s.words[2]));
  EXPECT_TRUE(snapshot.held_at_start(s.at(4), 0x1234));
  EXPECT_FALSE(snapshot.held_at_start(s.at(4), 0x1235));  // changed since
  EXPECT_FALSE(snapshot.held_at_start(s.at(5), 0x1234));  // another word
}

TEST(StartValues, LiveBlocksAtStartAreNotRemembered) {
  Segment s;
  SelfMemoryReader reader;
  MemoryRange range = s.range();
  auto block = reinterpret_cast<std::uintptr_t>(s.block);
  std::vector<MemoryRange> not_blocks = {{block, block + 1000}};
  StartSnapshot snapshot(candidate_start_words(std::span(&range, 1), not_blocks, reader), 0);
  EXPECT_FALSE(snapshot.held_at_start(s.at(2), s.words[2]));
  EXPECT_TRUE(snapshot.held_at_start(s.at(4), 0x1234));
}

// An unchanged integer inside a block allocated after the snapshot does not
// make it possibly lost; inside an older block it does, and so does a word
// stored since, or an unchanged pointer to a block's start.
TEST(StartValues, ClassifierDoesNotFollowStartIntegersIntoLaterBlocks) {
  Segment s;
  SelfMemoryReader reader;
  const StartSnapshot snapshot = snapshot_of(s, 10);
  const u64 address = reinterpret_cast<u64>(s.block);
  std::vector<HeapBlock> later = {{.address = address, .size = 1000, .age = 11}};
  std::vector<HeapBlock> older = {{.address = address, .size = 1000, .age = 10}};
  std::vector<MemoryRange> integer = {s.word(2)}, start = {s.word(3)};
  const ClassifyOptions options{.start_values = &snapshot};

  EXPECT_EQ(classify_blocks(later, integer, reader)[0], LeakClass::possible);
  EXPECT_EQ(classify_blocks(later, integer, reader, options)[0], LeakClass::direct);
  EXPECT_EQ(classify_blocks(older, integer, reader, options)[0], LeakClass::possible);
  EXPECT_EQ(classify_blocks(later, start, reader, options)[0], LeakClass::reachable);
  s.words[2] += 8;  // the program stored a pointer there since
  EXPECT_EQ(classify_blocks(later, integer, reader, options)[0], LeakClass::possible);
}

}  // namespace
}  // namespace memtrail::preload
