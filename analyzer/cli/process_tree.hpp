// The program's process tree as the process events tell it (process_events.hpp),
// and every image exec'd in it, judged by /proc as soon as its exec is heard.
// Kept from fork events, so an orphan (its parent ended) is still the
// program's; a pid that leaves the tree and comes back through a fork outside
// it is not.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "image_judge.hpp"
#include "process_events.hpp"

namespace memtrail::cli {

// One image exec'd by a process of the tree.
struct ExecImage {
  pid_t pid = 0;
  pid_t namespace_pid = 0;    // the pid it sees itself (getpid(), its trace's name)
  std::uint64_t exec_ns = 0;  // CLOCK_MONOTONIC of the exec
  // Until the pid's next image: its next exec, or a new process of that pid.
  std::uint64_t end_ns = std::numeric_limits<std::uint64_t>::max();
  bool exec_again = false;          // it ended by exec'ing once more
  bool program = false;             // the program's own first image, exec'd by run
  Verdict live = Verdict::not_yet;  // not_yet: never read (ended or exec'd first)
  bool traces_elsewhere = false;    // read traced, into another directory than the run's
  std::string executable;           // empty when never read
};

class ProcessTree {
 public:
  // `root`: the program, forked by `run` (whose pid is `self`) to trace
  // into the run directory `directory`.
  ProcessTree(pid_t root, pid_t self, std::string directory);

  // Applies `events` in order, judging each exec of a descendant by /proc
  // unless a later event of that pid already waits in `events`.
  void apply(const std::vector<ProcessEvent>& events);
  // After events were dropped: the descendants /proc shows join the tree.
  void add_descendants_from_proc();

  const std::vector<ExecImage>& images() const { return images_; }
  bool has_descendants() const { return members_.size() > 1; }

 private:
  void on_fork(const ProcessEvent& event);
  void on_exec(const std::vector<ProcessEvent>& events, std::size_t index);
  void end_image_of(pid_t pid, std::uint64_t time_ns, bool exec_again);

  pid_t root_, self_;
  std::string directory_;
  bool program_exec_seen_ = false;
  std::unordered_set<pid_t> members_;
  std::unordered_map<pid_t, std::size_t> latest_image_;  // index into images_
  std::vector<ExecImage> images_;
};

}  // namespace memtrail::cli
