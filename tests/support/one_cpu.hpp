// Test helper: confines the calling thread, and so the threads it starts,
// to one CPU for a scope. A recorder session started inside counts one
// core, so its busy program threads drain their own events
// (tracer/src/drain_sharing.cpp) even on a machine with cores to spare.
#pragma once

#include <sched.h>

namespace memtrail::test {

class OneCpu {
 public:
  OneCpu() {
    if (sched_getaffinity(0, sizeof all_, &all_) != 0) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &all_)) {
        CPU_SET(cpu, &one);
        break;
      }
    ok_ = sched_setaffinity(0, sizeof one, &one) == 0;
  }
  ~OneCpu() {
    if (ok_) sched_setaffinity(0, sizeof all_, &all_);
  }
  OneCpu(const OneCpu&) = delete;
  OneCpu& operator=(const OneCpu&) = delete;
  bool ok() const { return ok_; }

 private:
  cpu_set_t all_;
  bool ok_ = false;
};

}  // namespace memtrail::test
