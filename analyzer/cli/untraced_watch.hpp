// `memtrail run`'s watch for process images that run without the tracer.
//
// A child made behind every interposer's back (Go's os/exec and any runtime
// that forks and execs by raw system calls) with LD_PRELOAD or the
// MEMTRAIL_* variables out of its environment ran untraced, and the run
// said nothing. Nothing in the traced process sees such an exec, so `run`
// looks from outside, in one of two ways (docs/tracing.md, measured):
//
// - process events (process_events.hpp), where the kernel lets run listen
//   (root): every fork and exec on the machine, as it happens. Run keeps the
//   program's process tree from the forks (orphans stay in it) and judges
//   every image exec'd in it, however short-lived (exec_verdicts.hpp).
// - else, walks of the program's descendants in /proc every few
//   milliseconds: an image that ends between two walks, and one whose
//   parent ended first (no longer a descendant), escape.
//
// Either way an image is judged by its environment (LD_PRELOAD with the
// tracer and MEMTRAIL_OUTPUT) or its mappings (image_judge.hpp), and one
// found untraced is said missing in the run's list, as a trace that could
// not be created is. Nothing of the program's is touched (only /proc is
// read; no ptrace, no subreaper).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "process_events.hpp"
#include "process_tree.hpp"

namespace memtrail::cli {

class UntracedWatch {
 public:
  // Starts watching `root` and its descendants, traced into the run
  // directory `directory`: through `events` (opened
  // before `root` was forked, so its first events are in) when there are
  // some, else by walking /proc. Call with the signals that `memtrail run`
  // forwards still blocked: the watch's thread keeps them so.
  UntracedWatch(pid_t root, std::optional<ProcessEvents> events, const std::string& directory);
  ~UntracedWatch();
  UntracedWatch(const UntracedWatch&) = delete;
  UntracedWatch& operator=(const UntracedWatch&) = delete;

  // Ends the watch once the program has exited. The images found untraced,
  // as lines of the run's list ("PID\tmissing\tWHY"), judged against the
  // run directory.
  std::vector<std::string> stop();

  // Watching by process events (else by walks).
  bool listens() const { return tree_.has_value(); }

  // The walking watch saw a process besides the program's first: what it
  // may have missed matters.
  bool walked_descendants() const { return walked_descendants_; }

 private:
  void listen();
  void walk(pid_t root);

  pid_t root_;
  std::string directory_;
  std::optional<ProcessEvents> events_;
  std::optional<ProcessTree> tree_;  // with events_: what they told
  std::atomic<bool> stopping_{false};
  // Written by the thread until it is joined.
  std::vector<std::string> found_;
  bool walked_descendants_ = false;
  std::thread thread_;
};

}  // namespace memtrail::cli
