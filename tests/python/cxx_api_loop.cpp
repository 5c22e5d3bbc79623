// The C++ API's RAII forms of the C API (recorder.hpp: memtrail::Iteration,
// Scope, Paused): a loop that keeps 128 bytes per iteration.
#include <cstdio>
#include <memory>
#include <vector>

#include "memtrail/recorder.hpp"

int main() {
  std::vector<std::unique_ptr<char[]>> kept;
  kept.reserve(40);  // no growth of the vector itself in the loop
  {
    memtrail::Scope setup("setup");
    kept.emplace_back(new char[100]);
  }
  for (int step = 0; step < 30; ++step) {
    memtrail::Iteration iteration("step");
    kept.emplace_back(new char[128]);
  }
  {
    memtrail::Paused paused;
    delete[] new char[999];
  }
  std::printf("%s\n", memtrail_tracing() ? "tracing" : "not tracing");
  return 0;
}
