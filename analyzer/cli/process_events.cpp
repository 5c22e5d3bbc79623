// The process events connector (process_events.hpp).
#include "process_events.hpp"

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace memtrail::cli {
namespace {

// Bursts of thousands of processes elsewhere on the machine must not
// overflow the socket while run's thread is descheduled.
constexpr int kReceiveBuffer = 32 << 20;
// Messages read in one call of receive().
constexpr int kBatch = 4096;

// In the kernel, before anything is queued for run: only exec events, new
// processes (not threads) and the kernel's answers pass; exits, thread
// creations and the rest of the machine's chatter never wake run. Classic
// BPF reads words in network byte order, hence htonl.
bool attach_filter(int fd) {
  constexpr std::uint32_t kEvent = NLMSG_HDRLEN + sizeof(cn_msg);  // proc_event
  constexpr std::uint32_t kWhat = kEvent + offsetof(proc_event, what);
  constexpr std::uint32_t kChildPid = kEvent + offsetof(proc_event, event_data.fork.child_pid);
  constexpr std::uint32_t kChildTgid = kEvent + offsetof(proc_event, event_data.fork.child_tgid);
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kWhat),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(proc_event::PROC_EVENT_EXEC), 6, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(proc_event::PROC_EVENT_NONE), 5, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(proc_event::PROC_EVENT_FORK), 0, 5),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kChildPid),
      BPF_STMT(BPF_MISC | BPF_TAX, 0),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kChildTgid),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_X, 0, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, 0xffffffffu),  // keep
      BPF_STMT(BPF_RET | BPF_K, 0),            // drop
  };
  sock_fprog program{static_cast<unsigned short>(std::size(code)), code};
  return ::setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &program, sizeof program) == 0;
}

// Asks the kernel to start (LISTEN) or stop (IGNORE) sending process events.
bool send_request(int fd, proc_cn_mcast_op op, std::uint32_t tag) {
  constexpr std::size_t kSize = sizeof(nlmsghdr) + sizeof(cn_msg) + sizeof(proc_cn_mcast_op);
  alignas(nlmsghdr) char request[kSize] = {};
  auto* header = reinterpret_cast<nlmsghdr*>(request);
  header->nlmsg_len = kSize;
  header->nlmsg_type = NLMSG_DONE;
  header->nlmsg_pid = static_cast<std::uint32_t>(::getpid());
  auto* message = reinterpret_cast<cn_msg*>(request + sizeof(nlmsghdr));
  message->id = {CN_IDX_PROC, CN_VAL_PROC};
  message->ack = tag;
  message->len = sizeof op;
  std::memcpy(message->data, &op, sizeof op);
  return ::send(fd, request, kSize, 0) == static_cast<ssize_t>(kSize);
}

// Turns one datagram's messages into events; true when it held the
// kernel's answer to our request tagged `tag` (its error in `*answer`).
bool parse(const char* data, ssize_t size, std::uint32_t tag, int* answer,
           std::vector<ProcessEvent>* out) {
  bool answered = false;
  auto* header = reinterpret_cast<const nlmsghdr*>(data);
  for (int left = static_cast<int>(size); NLMSG_OK(header, left);
       header = NLMSG_NEXT(header, left)) {
    auto* message = static_cast<const cn_msg*>(NLMSG_DATA(header));
    if (message->id.idx != CN_IDX_PROC || message->len < sizeof(proc_event)) continue;
    auto* event = reinterpret_cast<const proc_event*>(message->data);
    if (event->what == proc_event::PROC_EVENT_NONE) {
      // Every listener hears every answer: ours carries our number plus
      // one (the kernel numbers the messages itself).
      if (message->ack == tag + 1) {
        *answer = static_cast<int>(event->event_data.ack.err);
        answered = true;
      }
    } else if (event->what == proc_event::PROC_EVENT_FORK && out) {
      const auto& fork = event->event_data.fork;
      out->push_back({ProcessEvent::Kind::fork, fork.child_tgid, fork.parent_tgid,
                      fork.child_pid != fork.child_tgid, event->timestamp_ns});
    } else if (event->what == proc_event::PROC_EVENT_EXEC && out) {
      // After the exec the thread that exec'd leads its group.
      out->push_back({ProcessEvent::Kind::exec, event->event_data.exec.process_tgid, 0, false,
                      event->timestamp_ns});
    }
  }
  return answered;
}

// Waits for the kernel's answer to the listen request. The kernel handles
// the request inside send(), so its answer is queued by then, behind what
// other processes' events came first; one that is not there within 100 ms
// never comes (the request was ignored: not the initial namespaces).
bool await_answer(int fd, std::uint32_t tag, std::string* why_not) {
  char buffer[8192];
  pollfd p{fd, POLLIN, 0};
  // Bounded: on a machine that makes processes without a pause, an answer
  // the kernel dropped (the buffer overflowed) must not keep run waiting.
  for (int message = 0; message < 100000 && ::poll(&p, 1, 100) > 0; ++message) {
    ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    int answer = 0;
    if (n <= 0 || !parse(buffer, n, tag, &answer, nullptr)) continue;
    if (answer == 0) return true;
    *why_not = std::string("the kernel refused to listen: ") + std::strerror(answer);
    return false;
  }
  *why_not = "the kernel did not answer (outside the initial user or PID namespace)";
  return false;
}

}  // namespace

bool process_events_disabled() {
  const char* value = std::getenv("MEMTRAIL_RUN_PROCESS_EVENTS");
  return value != nullptr && std::string_view(value) == "0";
}

std::optional<ProcessEvents> ProcessEvents::listen(std::string* why_not) {
  int fd = ::socket(PF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR);
  if (fd < 0) {
    *why_not = std::string("no process events connector: ") + std::strerror(errno);
    return std::nullopt;
  }
  ProcessEvents events(fd);
  int size = kReceiveBuffer;
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) != 0)
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  attach_filter(fd);  // without it run hears more, and filters it itself
  sockaddr_nl address{};
  address.nl_family = AF_NETLINK;
  address.nl_groups = CN_IDX_PROC;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    *why_not = std::string("cannot join the process events group: ") + std::strerror(errno);
    return std::nullopt;
  }
  const auto tag = static_cast<std::uint32_t>(::getpid());
  if (!send_request(fd, PROC_CN_MCAST_LISTEN, tag)) {
    *why_not = std::string("cannot ask for process events: ") + std::strerror(errno);
    return std::nullopt;
  }
  if (!await_answer(fd, tag, why_not)) return std::nullopt;
  return events;
}

ProcessEvents::ProcessEvents(ProcessEvents&& other) noexcept
    : fd_(other.fd_), overflows_(other.overflows_) {
  other.fd_ = -1;
}

ProcessEvents& ProcessEvents::operator=(ProcessEvents&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.fd_;
    overflows_ = other.overflows_;
    other.fd_ = -1;
  }
  return *this;
}

ProcessEvents::~ProcessEvents() {
  close();
}

void ProcessEvents::close() {
  if (fd_ < 0) return;
  // The kernel counts listeners, and stops sending when none is left.
  send_request(fd_, PROC_CN_MCAST_IGNORE, 0);
  ::close(fd_);
  fd_ = -1;
}

int ProcessEvents::receive(int wait_ms, std::vector<ProcessEvent>* out) {
  alignas(nlmsghdr) char buffer[16384];
  int unused = 0;
  pollfd p{fd_, POLLIN, 0};
  if (wait_ms > 0 && ::poll(&p, 1, wait_ms) <= 0) return 0;
  // What is queued, without a poll per message; a batch at most, so that a
  // flood elsewhere on the machine cannot hold the events run waits for.
  int message = 0;
  while (message < kBatch) {
    ssize_t n = ::recv(fd_, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n < 0 && errno == ENOBUFS) ++overflows_;             // the kernel dropped what did not fit
    if (n < 0 && errno != ENOBUFS && errno != EINTR) break;  // EAGAIN: all read
    if (n <= 0) continue;
    parse(buffer, n, 0, &unused, out);
    ++message;
  }
  return message;
}

}  // namespace memtrail::cli
