// The tracer's own heap (memtrail/detail/own_heap.hpp) keeps big blocks it
// was given back mapped for the next big request, but gives their pages back
// to the system: memory the tracer no longer uses must not stay in the
// traced program's RSS. At cc1plus's exit scan (issue 28) 5.2 MiB of such
// blocks were resident: the writer's and the scan's vectors, freed as they
// grew.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "memtrail/detail/own_heap.hpp"

namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kBig = 2u << 20;  // past the 256 KiB size classes
constexpr int kBlocks = 6;              // within the cache's 64 MiB

// Resident bytes of the mapping a big block lies in: its header page and
// the block (mincore fails on an unmapped range: nothing resident).
std::size_t resident_bytes(const void* block) {
  auto start = reinterpret_cast<std::uintptr_t>(block) & ~(kPage - 1);
  std::size_t pages = (reinterpret_cast<std::uintptr_t>(block) + kBig - start + kPage - 1) / kPage;
  std::vector<unsigned char> vec(pages);
  if (::mincore(reinterpret_cast<void*>(start), pages * kPage, vec.data()) != 0) return 0;
  return kPage * static_cast<std::size_t>(std::count_if(
                     vec.begin(), vec.end(), [](unsigned char v) { return (v & 1) != 0; }));
}

TEST(OwnHeap, BigBlocksGivenBackAreNotResident) {
  std::vector<unsigned char*> blocks;
  for (int i = 0; i < kBlocks; ++i) {
    auto* p = static_cast<unsigned char*>(memtrail::detail::own_malloc(kBig));
    ASSERT_NE(p, nullptr);
    std::memset(p, 0xab, kBig);  // every page resident
    blocks.push_back(p);
  }
  for (unsigned char* p : blocks) memtrail::detail::own_free(p);
  std::size_t resident = 0;
  for (unsigned char* p : blocks) resident += resident_bytes(p);
  // The header page of each block may stay (it says the block's size).
  EXPECT_LE(resident, kBlocks * kPage)
      << "of " << kBlocks << " freed blocks of " << kBig << " bytes";

  // Kept mapped: the next big request takes one of them, whole and usable.
  auto* again = static_cast<unsigned char*>(memtrail::detail::own_malloc(kBig));
  ASSERT_NE(again, nullptr);
  EXPECT_NE(std::find(blocks.begin(), blocks.end(), again), blocks.end());
  std::memset(again, 0xcd, kBig);
  EXPECT_EQ(again[kBig - 1], 0xcd);
  memtrail::detail::own_free(again);
}

}  // namespace
