// The traced process's side of the event tally (event_tally.hpp).
#include "event_tally.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "memtrail/event_tally.hpp"
#include "runtime.hpp"

namespace memtrail::runtime {
namespace {

constexpr std::size_t kTallyBytes = kTallyHeaderBytes + kTallySlots * kTallySlotBytes;

// Zeroes written, not a sparse file: every page has its blocks before the
// mapping's first store. With SIGXFSZ blocked, as the trace's own writes:
// a file size limit fails the tally, not the program.
bool fill_zeroes(int fd, const TallyHeader& header) {
  static const unsigned char zeroes[kTallyHeaderBytes] = {};
  sigset_t xfsz, old;
  sigemptyset(&xfsz);
  sigaddset(&xfsz, SIGXFSZ);
  pthread_sigmask(SIG_BLOCK, &xfsz, &old);
  bool ok = ::pwrite(fd, &header, sizeof header, 0) == static_cast<ssize_t>(sizeof header);
  for (std::size_t at = sizeof header; ok && at < kTallyBytes;) {
    std::size_t n = std::min(sizeof zeroes - at % sizeof zeroes, kTallyBytes - at);
    ssize_t wrote = ::pwrite(fd, zeroes, n, static_cast<off_t>(at));
    if (wrote < 0 && errno == EINTR) continue;
    ok = wrote > 0;
    at += ok ? static_cast<std::size_t>(wrote) : 0;
  }
  if (!ok && errno == EFBIG && !sigismember(&old, SIGXFSZ)) {
    timespec none{0, 0};
    while (sigtimedwait(&xfsz, nullptr, &none) == SIGXFSZ) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return ok;
}

}  // namespace

bool EventTally::create(const std::string& directory, const std::string& path) {
  int fd = open_in_run_directory(directory, path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return false;
  TallyHeader header{};
  std::memcpy(header.magic, kTallyMagic, sizeof header.magic);
  header.version = 1;
  header.pid = static_cast<std::uint32_t>(::getpid());
  long mapped = -1;
  if (fill_zeroes(fd, header))
    mapped = ::syscall(SYS_mmap, nullptr, kTallyBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);  // the mapping keeps the file; no descriptor of the program's is held
  if (mapped < 0 && mapped > -4096) {
    unlink_in_run_directory(directory, path);
    return false;
  }
  base_ = reinterpret_cast<unsigned char*>(mapped);
  directory_ = directory;
  path_ = path;
  return true;
}

std::uint64_t* EventTally::slot(std::uint32_t index) noexcept {
  return reinterpret_cast<std::uint64_t*>(base_ + kTallyHeaderBytes + index * kTallySlotBytes);
}

std::uint64_t* EventTally::take_slot() noexcept {
  if (!base_) return nullptr;
  lock_.lock();
  std::uint64_t* s = nullptr;
  if (free_head_ != 0) {
    s = slot(free_head_ - 1);
    free_head_ = static_cast<std::uint32_t>(s[1]);
  } else if (next_unused_ < kTallySlots) {
    s = slot(next_unused_++);
  } else {
    __atomic_fetch_add(&reinterpret_cast<TallyHeader*>(base_)->threads_without_slot, 1,
                       __ATOMIC_RELAXED);
  }
  lock_.unlock();
  return s;
}

void EventTally::give_back(std::uint64_t* s) noexcept {
  if (!base_ || !s) return;
  auto index = static_cast<std::uint32_t>(
      (reinterpret_cast<unsigned char*>(s) - base_ - kTallyHeaderBytes) / kTallySlotBytes);
  lock_.lock();
  s[1] = free_head_;  // the count (word 0) stays: the next holder adds to it
  free_head_ = index + 1;
  lock_.unlock();
}

void EventTally::set_written(std::uint64_t events) noexcept {
  if (base_)
    __atomic_store_n(&reinterpret_cast<TallyHeader*>(base_)->written, events, __ATOMIC_RELEASE);
}

void EventTally::remove() noexcept {
  if (!base_ || path_.empty()) return;
  unlink_in_run_directory(directory_, path_);
  path_.clear();  // the mapping stays: threads still inside the recorder may count on it
}

void EventTally::unmap() noexcept {
  if (!base_) return;
  ::syscall(SYS_munmap, base_, kTallyBytes);
  base_ = nullptr;
  path_.clear();
}

}  // namespace memtrail::runtime
