// The allocator tests that read their pools' events back record them with
// the in-process recorder, without stacks or heap samples (only the pools'
// events are looked at).
//
//   ASSERT_TRUE(memtrail::test::start_pool_recording(dir.path + "/pools.mtr"));
//   ...  // pools made and used here
//   memtrail::stop();
#pragma once

#include <string>

#include "memtrail/recorder.hpp"

namespace memtrail::test {

inline bool start_pool_recording(const std::string& path) {
  memtrail::RecorderOptions options;
  options.output = path;
  options.stacks = false;
  options.sample_interval_ms = 0;
  return memtrail::start(options);
}

}  // namespace memtrail::test
