// Invariant checks in three levels, after mimalloc's mi_assert /
// mi_assert_internal / mi_assert_expensive: checked in Debug builds and in
// the tests that ask for them, free in Release (the condition is not even
// evaluated, so a check may call a slow helper).
//
//   MEMTRAIL_ASSERT(c)            level >= 1: a caller's contract (cheap)
//   MEMTRAIL_ASSERT_INTERNAL(c)   level >= 2: our own structures' invariants
//   MEMTRAIL_ASSERT_EXPENSIVE(c)  level >= 3: whole-structure checks, O(n)
//
// MEMTRAIL_ASSERT_LEVEL picks the level; by default 2 without NDEBUG
// (Debug) and 0 with it (Release, RelWithDebInfo). A test binary that
// compiles the checked code itself defines it to 3 (tests/format's
// test_codec_model). A failed check writes one line to stderr with write(2)
// (no stdio: this runs inside the traced program too) and aborts.
#pragma once

#ifndef MEMTRAIL_ASSERT_LEVEL
#ifdef NDEBUG
#define MEMTRAIL_ASSERT_LEVEL 0
#else
#define MEMTRAIL_ASSERT_LEVEL 2
#endif
#endif

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace memtrail::detail {
[[noreturn, gnu::cold, gnu::noinline]] inline void assertion_failed(const char* condition,
                                                                    const char* file, int line) {
  char digits[12];
  int n = 0;
  for (unsigned v = static_cast<unsigned>(line); n == 0 || v != 0; v /= 10)
    digits[n++] = '0' + v % 10;
  char number[12];
  for (int i = 0; i < n; ++i) number[i] = digits[n - 1 - i];
  const char* parts[] = {"memtrail: assertion failed: ", condition, " (", file, ":"};
  for (const char* p : parts) (void)!::write(2, p, std::strlen(p));
  (void)!::write(2, number, static_cast<std::size_t>(n));
  (void)!::write(2, ")\n", 2);
  std::abort();
}
}  // namespace memtrail::detail

#define MEMTRAIL_CHECK_(c)                   \
  (__builtin_expect(static_cast<bool>(c), 1) \
       ? static_cast<void>(0)                \
       : ::memtrail::detail::assertion_failed(#c, __FILE__, __LINE__))
#define MEMTRAIL_SKIP_(c) static_cast<void>(sizeof(static_cast<bool>(c)))

#if MEMTRAIL_ASSERT_LEVEL >= 1
#define MEMTRAIL_ASSERT(c) MEMTRAIL_CHECK_(c)
#else
#define MEMTRAIL_ASSERT(c) MEMTRAIL_SKIP_(c)
#endif
#if MEMTRAIL_ASSERT_LEVEL >= 2
#define MEMTRAIL_ASSERT_INTERNAL(c) MEMTRAIL_CHECK_(c)
#else
#define MEMTRAIL_ASSERT_INTERNAL(c) MEMTRAIL_SKIP_(c)
#endif
#if MEMTRAIL_ASSERT_LEVEL >= 3
#define MEMTRAIL_ASSERT_EXPENSIVE(c) MEMTRAIL_CHECK_(c)
#else
#define MEMTRAIL_ASSERT_EXPENSIVE(c) MEMTRAIL_SKIP_(c)
#endif
