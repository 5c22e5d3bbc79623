// Benchmark helper: a recorder session for one benchmark run, into a trace
// file of its own in /tmp that is removed afterwards.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "memtrail/recorder.hpp"

namespace memtrail::bench {

class TracedSession {
 public:
  // `name` tells the benchmark binaries' files apart; samples off unless
  // `samples` (they would add the sampler's work to what is measured).
  TracedSession(const char* name, bool stacks, int depth = 10, bool samples = false)
      : path_("/tmp/memtrail-bench-" + std::string(name) + "-" + std::to_string(getpid()) +
              ".mtr") {
    RecorderOptions o;
    o.output = path_;
    o.stacks = stacks;
    o.stack_depth = depth;
    if (!samples) o.sample_interval_ms = 0;
    if (!start(o)) std::abort();
  }
  ~TracedSession() {
    stop();
    std::remove(path_.c_str());
  }
  TracedSession(const TracedSession&) = delete;
  TracedSession& operator=(const TracedSession&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace memtrail::bench
