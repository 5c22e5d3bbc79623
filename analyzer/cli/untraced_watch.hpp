// `memtrail run`'s watch for process images that run without the tracer.
//
// A child made behind every interposer's back (Go's os/exec and any runtime
// that forks and execs by raw system calls) with LD_PRELOAD or the
// MEMTRAIL_* variables out of its environment ran untraced, and the run
// said nothing. Nothing in the traced process sees such an exec, so `run`
// looks from outside: while the program runs, a thread walks its
// descendants in /proc every few milliseconds and reads the environment of
// each new process image (a new exec keeps the pid, not its stack or
// environment addresses). An image whose environment lacks LD_PRELOAD with
// the tracer or MEMTRAIL_OUTPUT, and which has not mapped the tracer, is
// said missing in the run's list, as a trace that could not be created is.
// Nothing of the program's is touched (only /proc is read). What escapes:
// an image that ends between two walks, and one whose parent ended first
// (it is no longer a descendant).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace memtrail::cli {

class UntracedWatch {
 public:
  // Starts watching `root` and its descendants. Call with the signals that
  // `memtrail run` forwards still blocked: the watch's thread keeps them so.
  explicit UntracedWatch(pid_t root);
  ~UntracedWatch();
  UntracedWatch(const UntracedWatch&) = delete;
  UntracedWatch& operator=(const UntracedWatch&) = delete;

  // Ends the watch. The images found untraced, as lines of the run's list
  // ("PID\tmissing\tWHY"), in the order found.
  std::vector<std::string> stop();

 private:
  void watch(pid_t root);

  std::atomic<bool> stopping_{false};
  std::vector<std::string> found_;  // written by the thread until it is joined
  std::thread thread_;
};

}  // namespace memtrail::cli
