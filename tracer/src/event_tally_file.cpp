// Reading an event tally (event_tally.hpp); the traced process writes it
// (tracer/src/event_tally.cpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "memtrail/event_tally.hpp"

namespace memtrail {

TallyCounts read_event_tally(const std::string& path) {
  TallyCounts out;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    out.error = path + ": " + std::strerror(errno);
    return out;
  }
  std::vector<char> bytes;
  char buf[1 << 16];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      out.error = path + ": " + std::strerror(errno);
      ::close(fd);
      return out;
    }
    bytes.insert(bytes.end(), buf, buf + n);
  }
  ::close(fd);
  TallyHeader h;
  if (bytes.size() < kTallyHeaderBytes ||
      (std::memcpy(&h, bytes.data(), sizeof h), std::memcmp(h.magic, kTallyMagic, 8) != 0) ||
      h.version != 1) {
    out.error = path + ": not an event tally";
    return out;
  }
  out.ok = true;
  out.pid = h.pid;
  out.written = h.written;
  out.exact = h.threads_without_slot == 0;
  for (std::size_t at = kTallyHeaderBytes; at + kTallySlotBytes <= bytes.size();
       at += kTallySlotBytes) {
    std::uint64_t made;
    std::memcpy(&made, bytes.data() + at, sizeof made);
    out.made += made;
  }
  return out;
}

}  // namespace memtrail
