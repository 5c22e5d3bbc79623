// glibc_main_arena.hpp: the arena found by its initialiser's signature is
// glibc's main arena -- its `top` is where the block just carved from the
// top chunk ends, and after a split-and-merge its `last_remainder` points
// into the middle of a live block (why the leak scan leaves it out).
#include "glibc_main_arena.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

namespace memtrail::preload {
namespace {

using u64 = std::uint64_t;

u64 word_at(u64 address) {
  u64 w;
  std::memcpy(&w, reinterpret_cast<const void*>(address), sizeof w);
  return w;
}

void keep(void* p) {
  asm volatile("" : : "r"(p) : "memory");
}

class MainArena : public testing::Test {
 protected:
  void SetUp() override {
    find_glibc_main_arena();
    arena_ = glibc_main_arena();
    ASSERT_NE(arena_.end, 0u) << "main_arena not found";
  }
  MemoryRange arena_;
};

TEST_F(MainArena, LiesInLibcData) {
  EXPECT_EQ(arena_.end - arena_.begin, 2200u);
  Dl_info info{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(arena_.begin), &info), 0);
  EXPECT_NE(std::string(info.dli_fname).find("libc.so"), std::string::npos) << info.dli_fname;
}

// A block bigger than any free chunk comes from the top chunk: `top` (at
// offset 96) is then its chunk's end.
TEST_F(MainArena, TopIsWhereTheNewestBlockEnds) {
  auto* p = static_cast<char*>(std::malloc(100000));
  keep(p);
  const u64 chunk = reinterpret_cast<u64>(p) - 16;
  const u64 size = word_at(chunk + 8) & ~u64{7};
  EXPECT_EQ(word_at(arena_.begin + 96), chunk + size);
  std::free(p);
}

// tests/leaks/programs/stale_remainder.c's shape: `last_remainder` (at
// offset 104) ends up 208 bytes into a live block.
TEST_F(MainArena, LastRemainderGoesStaleInsideALiveBlock) {
  void* fill[7];
  for (auto& f : fill) keep(f = std::malloc(200));
  char* a = static_cast<char*>(std::malloc(2000));
  void* guard = std::malloc(16);
  keep(a);
  keep(guard);
  std::free(a);
  char* b = static_cast<char*>(std::malloc(200));
  keep(b);
  for (auto* f : fill) std::free(f);
  std::free(b);
  char* again = static_cast<char*>(std::malloc(2000));
  keep(again);
  const u64 remainder = word_at(arena_.begin + 104);
  EXPECT_GT(remainder, reinterpret_cast<u64>(again));
  EXPECT_LT(remainder, reinterpret_cast<u64>(again) + 2000);
  std::free(again);
  std::free(guard);
}

}  // namespace
}  // namespace memtrail::preload
