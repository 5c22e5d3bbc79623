// glibc's heap figures for the samples, read on a thread of their own.
//
// mallinfo2() takes every malloc arena's lock. A program thread stopped by
// a fatal signal inside malloc holds one of them for good, and its handler
// waits for the writer to finish the trace: a writer blocked in mallinfo2()
// never did, and the trace lost its end when the handler gave up (one
// SIGTERM in four, on one CPU, in a program that allocates flat out). So
// the writer never calls it: it asks this thread, takes the answer if it
// comes within a moment, and otherwise the last one.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace memtrail::runtime {

class HeapProbe {
 public:
  struct Figures {
    std::uint64_t in_use = 0;    // uordblks + hblkhd
    std::uint64_t reserved = 0;  // arena + hblkhd
  };
  HeapProbe() = default;
  ~HeapProbe() { stop(); }
  HeapProbe(const HeapProbe&) = delete;
  HeapProbe& operator=(const HeapProbe&) = delete;

  // Fresh figures if the probe answers within `wait_ms`, else the last ones.
  // The first call starts the thread, which inherits the caller's signal
  // mask (the writer's: it takes no signal meant for the program).
  Figures read(int wait_ms);
  // Ends the thread (the session stops; Sessions are never freed).
  void stop();
  // Around a fork that takes no malloc lock (_Fork): waits (up to
  // `wait_ms`) until the probe is outside mallinfo2() and keeps it out,
  // so the child never inherits an arena lock it took.
  void hold(int wait_ms);
  void release();

 private:
  void run();
  std::mutex mutex_;
  std::condition_variable changed_;
  bool asked_ = false;  // a reading is wanted
  bool busy_ = false;   // the probe is inside mallinfo2()
  bool stop_ = false;
  std::uint64_t readings_ = 0;
  Figures last_;
  std::thread thread_;
};

}  // namespace memtrail::runtime
