// The libraries in the process only because libmemtrail_preload.so needs
// them: libstdc++, libgcc_s, libunwind, ... in a C program. Their start-up
// allocations (libstdc++'s 72,704-byte exception pool) are not the
// program's: the early buffer drops them (early_events.cpp).
//
// From the DT_NEEDED graph of the loaded objects: what our two libraries
// need, minus what every other object (the program, its libraries, other
// preloads) needs. No allocation: fixed tables, filled once at start-up.
#pragma once

#include <cstdint>

namespace memtrail::preload {

class OwnDependencies {
 public:
  OwnDependencies();
  // True when `ip` lies in a library that only we need.
  bool only_ours(std::uint64_t ip) const;
  // True when `ip` lies in libmemtrail_preload.so or libmemtrail.so.
  bool in_tracer(std::uint64_t ip) const;

 private:
  static constexpr int kMaxRanges = 64;
  struct Range {
    std::uint64_t begin = 0, end = 0;
  };
  Range only_ours_[kMaxRanges];
  Range tracer_[2];
  int count_ = 0;
};

// Before the preload's constructor (early_open()): true when `caller`, the
// return address of a heap call, lies in a library only the tracer needs
// (libstdc++ in a C program, whose constructor allocates its 72,704-byte
// emergency exception pool): that block is the tracer's, and comes from its
// own heap, so the program's mallinfo2() does not count it. The graph is
// read once, on the first call not made by ld.so (every object of the
// start-up set is loaded by then: only ld.so allocates while it loads, and
// constructors run after loading); ld.so's own calls are never ours.
bool early_caller_only_ours(const void* caller);

}  // namespace memtrail::preload
