// The kernel's process events connector (netlink NETLINK_CONNECTOR,
// CN_IDX_PROC), as `memtrail run` listens to it: every fork and exec of
// every process on the machine, in order, sent by the kernel as it happens
// (the exec after the new image is mapped, before it runs). Listening
// needs CAP_NET_ADMIN in the initial user and network namespaces (root
// outside a container); without it run watches by walking /proc
// (untraced_watch.hpp).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memtrail::cli {

struct ProcessEvent {
  enum class Kind { fork, exec } kind = Kind::fork;
  pid_t pid = 0;              // the process (thread group): the new one for a fork
  pid_t parent = 0;           // fork: the process that forked
  bool thread = false;        // fork: a new thread, not a new process
  std::uint64_t time_ns = 0;  // CLOCK_MONOTONIC, the kernel's stamp
};

class ProcessEvents {
 public:
  // Subscribes (and waits up to a second for the kernel's answer).
  // Nothing, with `why_not` said, where the kernel refuses or never answers.
  static std::optional<ProcessEvents> listen(std::string* why_not);
  ProcessEvents(ProcessEvents&& other) noexcept;
  ProcessEvents& operator=(ProcessEvents&& other) noexcept;
  ~ProcessEvents();

  // Appends the fork and exec events of the messages received within
  // `wait_ms` (0: those already queued only); how many messages it read.
  int receive(int wait_ms, std::vector<ProcessEvent>* out);
  // How often the socket's buffer overflowed: each time the kernel dropped
  // events, which the caller must say.
  int overflows() const { return overflows_; }

 private:
  explicit ProcessEvents(int fd) : fd_(fd) {}
  void close();
  int fd_ = -1;
  int overflows_ = 0;
};

// Off with MEMTRAIL_RUN_PROCESS_EVENTS=0 in run's environment (taken out
// before the program starts): the tests of the walking watch use it.
bool process_events_disabled();

}  // namespace memtrail::cli
