// Words of the modules' writable segments (and of the kernel's argument
// block at the top of the main thread's stack: argv, envp, the aux vector)
// as they were when the tracer started: a word that still holds that value
// at exit cannot point at a block allocated since (no such block existed
// to point at).
//
// The file rule (image_constants.hpp) catches link-time constants. Start-up
// code computes integers too: glibc's cache sizes (__x86_shared_cache_size
// and its kin), a library constructor's tables. In a program linked at a
// fixed address (non-PIE) the brk heap lies among such integers, so one of
// them covered a 100,000-byte leak in about 1 run of 2,000 and made it
// "possibly lost" (tests/leaks/programs/start_integers.c). The tracer takes
// this snapshot in its constructor (after libc's start-up, the linked
// libraries' constructors and the program's preinit_array, before the
// program's own constructors and main), remembering only the words that
// could ever equal a later block's address: not 0, not inside a module
// image, not inside a block live then.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "reachability.hpp"

namespace memtrail::preload {

struct StartWord {
  std::uintptr_t at = 0;
  std::uint64_t value = 0;
};

class StartSnapshot final : public StartValues {
 public:
  // `words` in any order; `last_age`: the largest HeapBlock::age among the
  // blocks live when the words were read (a block allocated later has a
  // larger one).
  StartSnapshot(std::vector<StartWord> words, std::uint64_t last_age);

  std::uint64_t last_age() const override { return last_age_; }
  bool held_at_start(std::uintptr_t at, std::uint64_t value) const override;
  std::size_t size() const { return words_.size(); }

 private:
  std::vector<StartWord> words_;  // sorted by `at`
  std::uint64_t last_age_ = 0;
};

// The words of `ranges` (read through `reader`) worth remembering: a value
// that is not 0 and lies outside every range of `not_blocks` (sorted or not:
// the module images, the blocks live now, the first page-sized addresses).
std::vector<StartWord> candidate_start_words(std::span<const MemoryRange> ranges,
                                             std::span<const MemoryRange> not_blocks,
                                             MemoryReader& reader);

}  // namespace memtrail::preload
