// The event blocks' pool (tracer/src/block_pool.hpp) gives the memory of
// drained blocks back: the free blocks past BlockPool::kWarmBlocks that no
// get() needed for a whole idle period, or all of them once threads ended
// and the backlog is drained, are no longer resident (their header pages
// aside), and get() hands out resident blocks before released ones. Eight
// threads writing faster than the drain once left ~40 blocks (5 MiB)
// resident for the process's life (GuestParity.Shape12_MovingReallocsInOneArena).
// Blocks taken again within the period stay resident: released, each would
// fault its pages in again.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "block_pool.hpp"

namespace {

using memtrail::runtime::Block;
using memtrail::runtime::BlockPool;

constexpr std::size_t kPage = 4096;

// Resident pages of a block's mapping, by mincore.
std::size_t resident_pages(Block* b) {
  std::vector<unsigned char> vec(Block::kBytes / kPage);
  if (::mincore(b, Block::kBytes, vec.data()) != 0) return SIZE_MAX;
  return static_cast<std::size_t>(
      std::count_if(vec.begin(), vec.end(), [](unsigned char v) { return (v & 1) != 0; }));
}

Block* filled_block(BlockPool& pool) {
  Block* b = pool.get();
  std::memset(b->data(), 0xab, Block::capacity());  // every page touched
  b->used.store(Block::capacity());
  return b;
}

TEST(BlockPool, BlocksPastTheWarmOnesAreReleasedWhenPutBack) {
  BlockPool pool;
  constexpr std::size_t kCount = 3 * BlockPool::kWarmBlocks;
  std::vector<Block*> out;
  for (std::size_t i = 0; i < kCount; ++i) out.push_back(filled_block(pool));
  for (Block* b : out) ASSERT_EQ(resident_pages(b), Block::kBytes / kPage);
  EXPECT_EQ(pool.blocks_out(), kCount);

  for (Block* b : out) pool.put(b);
  pool.trim(0, 0);                         // a period begins
  pool.trim(0, BlockPool::kIdlePeriodNs);  // none was taken again in it
  EXPECT_EQ(pool.blocks_out(), 0u);
  for (std::size_t i = 0; i < kCount; ++i) {
    if (i < BlockPool::kWarmBlocks)
      EXPECT_EQ(resident_pages(out[i]), Block::kBytes / kPage) << "warm block " << i;
    else
      EXPECT_LE(resident_pages(out[i]), 1u) << "released block " << i;  // its header page
  }
}

TEST(BlockPool, ResidentBlocksAreReusedFirstAndReleasedOnesComeBackEmpty) {
  BlockPool pool;
  constexpr std::size_t kCount = BlockPool::kWarmBlocks + 4;
  std::vector<Block*> out;
  for (std::size_t i = 0; i < kCount; ++i) out.push_back(filled_block(pool));
  for (Block* b : out) pool.put(b);
  pool.trim(0, 0);
  pool.trim(0, BlockPool::kIdlePeriodNs);
  std::vector<Block*> warm(out.begin(), out.begin() + BlockPool::kWarmBlocks);
  for (std::size_t i = 0; i < BlockPool::kWarmBlocks; ++i) {
    Block* b = pool.get();
    EXPECT_NE(std::find(warm.begin(), warm.end(), b), warm.end()) << "get " << i;
    EXPECT_EQ(b->used.load(), 0u);
    EXPECT_EQ(b->next.load(), nullptr);
  }
  Block* cold = pool.get();  // a released one: reset, its events gone
  EXPECT_EQ(std::find(warm.begin(), warm.end(), cold), warm.end());
  EXPECT_EQ(cold->used.load(), 0u);
  EXPECT_EQ(cold->data()[Block::capacity() - 1], 0);
  // Nothing new was mapped: every block came from the free lists.
  EXPECT_EQ(pool.blocks_out(), BlockPool::kWarmBlocks + 1);
}

// tight-pairs under `memtrail run`: the writer gives blocks back while the
// program thread still has a backlog out, and takes them again at once.
// Released then, each came back through ~31 page faults (~37,000 a run).
TEST(BlockPool, BlocksTakenAgainWithinThePeriodStayResident) {
  BlockPool pool;
  constexpr std::size_t kCount = 3 * BlockPool::kWarmBlocks;
  std::vector<Block*> out;
  for (std::size_t i = 0; i < kCount; ++i) out.push_back(filled_block(pool));
  const std::size_t back = 2 * BlockPool::kWarmBlocks;  // a third still out
  for (std::size_t i = 0; i < back; ++i) pool.put(out[i]);
  pool.trim(1, 0);  // a period begins
  std::vector<Block*> again;
  for (std::size_t i = 0; i < back; ++i) again.push_back(filled_block(pool));  // all taken
  for (Block* b : again) pool.put(b);                                          // and back
  pool.trim(1, BlockPool::kIdlePeriodNs / 2);  // another drain pass within the period
  pool.trim(1, BlockPool::kIdlePeriodNs);
  for (std::size_t i = 0; i < back; ++i)
    EXPECT_EQ(resident_pages(out[i]), Block::kBytes / kPage) << "block " << i;
  // A whole period in which none was taken: the surplus goes.
  pool.trim(1, 2 * BlockPool::kIdlePeriodNs);
  std::size_t resident = 0;
  for (std::size_t i = 0; i < back; ++i)
    resident += resident_pages(out[i]) == Block::kBytes / kPage;
  EXPECT_EQ(resident, BlockPool::kWarmBlocks);
}

// Eight threads' burst, then the threads end: their demand went with them,
// so the surplus goes at the drain that empties the backlog, not a period later.
TEST(BlockPool, SurplusGoesAtOnceWhenThreadsEndedAndTheBacklogIsDrained) {
  BlockPool pool;
  constexpr std::size_t kCount = 3 * BlockPool::kWarmBlocks;
  std::vector<Block*> out;
  for (std::size_t i = 0; i < kCount; ++i) out.push_back(filled_block(pool));
  pool.trim(8, 0);
  for (std::size_t i = 0; i + 1 < kCount; ++i) pool.put(out[i]);  // one thread writes on
  pool.trim(1, 1);
  std::size_t resident = 0;
  for (std::size_t i = 0; i + 1 < kCount; ++i)
    resident += resident_pages(out[i]) == Block::kBytes / kPage;
  EXPECT_EQ(resident, BlockPool::kWarmBlocks);
  EXPECT_EQ(pool.blocks_out(), 1u);
}

// cross-thread-64: with that many live threads their own blocks are most of
// the tracer's memory, and blocks cycled warm were each fully resident:
// every drained block goes back at the drain, none kept warm. Below the
// threshold the warm ones stay (tight-pairs: no page faults added).
TEST(BlockPool, WithManyThreadsLiveEveryDrainedBlockIsReleased) {
  for (std::uint64_t writing :
       {BlockPool::kReleaseAllAtThreads - 1, BlockPool::kReleaseAllAtThreads}) {
    BlockPool pool;
    constexpr std::size_t kCount = BlockPool::kWarmBlocks;
    std::vector<Block*> out;
    for (std::size_t i = 0; i < kCount; ++i) out.push_back(filled_block(pool));
    for (Block* b : out) pool.put(b);
    pool.trim(writing, 0);
    const bool many = writing >= BlockPool::kReleaseAllAtThreads;
    for (Block* b : out)
      if (many)
        EXPECT_LE(resident_pages(b), 1u) << writing << " threads";  // its header page
      else
        EXPECT_EQ(resident_pages(b), Block::kBytes / kPage) << writing << " threads";
  }
}

// With many live threads the drain gives back what it has read of a block
// its thread is still writing, whole pages below the read position, in
// steps of kReleaseStep; the page the thread writes in and those after it
// stay. With few threads nothing goes.
TEST(BlockPool, WithManyThreadsTheReadPartOfABlockGoesBack) {
  BlockPool pool;
  Block* b = filled_block(pool);
  const std::uint32_t read = 100 * 1024 + 100;  // within a page
  EXPECT_EQ(BlockPool::release_read(b, 0, read, BlockPool::kReleaseAllAtThreads - 1), 0u);
  EXPECT_EQ(resident_pages(b), Block::kBytes / kPage);
  // Less than a step more read: nothing yet.
  EXPECT_EQ(
      BlockPool::release_read(b, 0, BlockPool::kReleaseStep - 1, BlockPool::kReleaseAllAtThreads),
      0u);
  EXPECT_EQ(resident_pages(b), Block::kBytes / kPage);
  EXPECT_EQ(BlockPool::release_read(b, 0, read, BlockPool::kReleaseAllAtThreads), read);
  auto base = reinterpret_cast<std::uintptr_t>(b);
  std::size_t read_end_page = (reinterpret_cast<std::uintptr_t>(b->data()) + read - base) / kPage;
  // Pages 1 .. read_end_page - 1 went; the header page, the one being read
  // and those after it stay.
  EXPECT_EQ(resident_pages(b), Block::kBytes / kPage - (read_end_page - 1));
  EXPECT_EQ(b->data()[read], 0xab);  // the unread part is intact
  pool.put(b);
}

}  // namespace
