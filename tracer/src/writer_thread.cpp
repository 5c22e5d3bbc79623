// The writer thread of a Session: every few milliseconds it consumes the
// events each program thread has published, merges them by time, turns ip
// arrays into stack-trie ids, keeps the live-heap map, adds `sample` events
// and hands everything to the TraceWriter. It flushes a chunk every
// flush_interval_ms, and at once when a flush is requested. While the
// program's busy threads fill every core they drain themselves with the
// same drain() (drain_sharing.cpp) and the writer only samples and flushes.
#include <fcntl.h>
#include <linux/futex.h>
#include <malloc.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <optional>

#include "memtrail/detail/diagnostics.hpp"
#include "memtrail/detail/environment.hpp"
#include "memtrail/detail/heap_window.hpp"
#include "memtrail/detail/live_blocks.hpp"
#include "memtrail/detail/own_mappings.hpp"
#include "memtrail/detail/signals.hpp"
#include "runtime.hpp"

namespace memtrail::runtime {

namespace {

constexpr std::uint64_t kMs = 1'000'000;
constexpr int kDrainPeriodMs = 10;
// While program threads drain, the writer looks this often whether they
// still fill the cores (and samples and flushes as usual).
constexpr int kAsideCheckMs = 2;

std::uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + ts.tv_nsec;
}

// statm stays open at a high number (private_fd.hpp): opening it at each
// sample would take the program's lowest free descriptor for a moment, and
// a program at its RLIMIT_NOFILE would see open() fail at random.
std::uint64_t rss_bytes(detail::OwnFd& statm) {
  auto lock = detail::private_fd_lock();  // the program's dup2 waits for the read
  if (!statm.still_ours()) {
    statm.fd = -1;  // closed (or reused) by the program: not ours to close
    if (!statm.adopt(::open("/proc/self/statm", O_RDONLY | O_CLOEXEC))) return 0;
  }
  char buf[128];
  ssize_t n = ::pread(statm.fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return 0;
  buf[n] = '\0';
  unsigned long long size = 0, resident = 0;
  if (std::sscanf(buf, "%llu %llu", &size, &resident) != 2) return 0;
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

std::string read_file(const char* path) {
  std::string out;
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return out;
}

}  // namespace

std::uint64_t SessionClock::monotonic_ns() {
  return runtime::monotonic_ns();
}

bool SessionClock::invariant_tsc() {
#if defined(__x86_64__)
  static const bool invariant = [] {
    std::string info = read_file("/proc/cpuinfo");
    auto flags = info.find("\nflags");
    if (flags == std::string::npos) return false;
    std::string line = info.substr(flags, info.find('\n', flags + 1) - flags) + " ";
    // rdtscp: raw_now() needs its ordered read.
    return line.find(" constant_tsc ") != std::string::npos &&
           line.find(" nonstop_tsc ") != std::string::npos &&
           line.find(" rdtscp ") != std::string::npos;
  }();
  return invariant;
#else
  return false;
#endif
}

#if defined(__x86_64__)
// A (TSC, CLOCK_MONOTONIC) pair read close together: the tightest of a few
// tries, so a preemption between the two reads cannot skew the ratio.
static void read_clock_pair(std::uint64_t* ticks, std::uint64_t* ns) {
  std::uint64_t best = UINT64_MAX;
  for (int i = 0; i < 8 && best > 2000; ++i) {
    std::uint64_t a = monotonic_ns();
    std::uint64_t t = __builtin_ia32_rdtsc();
    std::uint64_t b = monotonic_ns();
    if (b - a < best) {
      best = b - a;
      *ticks = t;
      *ns = a + (b - a) / 2;
    }
  }
}
#endif

void SessionClock::begin() {
  tsc = invariant_tsc();
  start_ns = monotonic_ns();
#if defined(__x86_64__)
  if (tsc) read_clock_pair(&start_ticks, &start_ns);
#endif
  ns_per_tick = 0;
  ns_per_tick_q32 = 0;
  last_ns = 0;
}

void SessionClock::calibrate() {
#if defined(__x86_64__)
  if (!tsc) return;
  // The longer the baseline the better the ratio; once it spans 2 s the
  // ratio is good to ~1e-7 and stays fixed, so time never stretches later.
  static constexpr std::uint64_t kFixedAfterNs = 2'000'000'000;
  if (ns_per_tick != 0 && last_ns > kFixedAfterNs) return;
  std::uint64_t ticks = 0, ns = 0;
  read_clock_pair(&ticks, &ns);
  if (ticks <= start_ticks || ns <= start_ns) return;
  std::uint64_t elapsed = ns - start_ns;
  if (ns_per_tick == 0 || elapsed >= 1'000'000)  // 1 ms baseline at least
    ns_per_tick = static_cast<double>(elapsed) / static_cast<double>(ticks - start_ticks);
  ns_per_tick_q32 = static_cast<std::uint64_t>(ns_per_tick * 4294967296.0);
#endif
}

std::string expand_output_path(const std::string& pattern, bool is_fork_child) {
  std::string out;
  bool has_pid = false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size()) {
      char c = pattern[i + 1];
      if (c == 'p') {
        out += std::to_string(::getpid());
        has_pid = true;
        ++i;
        continue;
      }
      if (c == 'h') {
        char host[256] = {};
        ::gethostname(host, sizeof host - 1);
        out += host;
        ++i;
        continue;
      }
    }
    out += pattern[i];
  }
  if (is_fork_child && !has_pid) {
    // The child must not overwrite its parent's file: name.<pid>.mtr
    std::size_t slash = out.rfind('/');
    std::size_t dot = out.rfind('.');
    std::string suffix = "." + std::to_string(::getpid());
    if (dot != std::string::npos && (slash == std::string::npos || dot > slash) && dot != 0)
      out.insert(dot, suffix);
    else
      out += suffix;
  }
  return out;
}

TraceHeader make_header(std::uint64_t start_monotonic_ns) {
  TraceHeader h;
  h.pid = static_cast<std::uint32_t>(::getpid());
  h.ppid = static_cast<std::uint32_t>(::getppid());
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  h.start_realtime_ns = static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + ts.tv_nsec;
  h.start_monotonic_ns = start_monotonic_ns;
  h.clock_id = CLOCK_MONOTONIC;
  h.time_resolution_ns = detail::time_resolution_from_environment();
  std::string cmdline = read_file("/proc/self/cmdline");
  while (!cmdline.empty() && cmdline.back() == '\0') cmdline.pop_back();
  std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
  h.command_line = cmdline;
  char exe[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) h.executable.assign(exe, static_cast<std::size_t>(n));
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  h.hostname = host;
  return h;
}

std::uint64_t Session::now_ns() const {
  return monotonic_ns() - start_monotonic_ns;
}

void Session::wake() {
  wake_word.fetch_add(1, std::memory_order_release);
  ::syscall(SYS_futex, &wake_word, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

void Session::request_flush(int timeout_ms) {
  if (abandon_if_foreign(this)) return;  // no writer to wait for here
  std::uint64_t ticket = flush_requested.fetch_add(1, std::memory_order_acq_rel) + 1;
  if (std::this_thread::get_id() == writer_thread.get_id()) return;  // cannot wait for itself
  wake();
  // Polling keeps this usable from a signal handler (no condition variable).
  timespec nap{0, 200'000};
  for (int waited_us = 0; waited_us < timeout_ms * 1000; waited_us += 200) {
    if (flush_done.load(std::memory_order_acquire) >= ticket) return;
    if (!writer_thread.joinable()) return;
    ::nanosleep(&nap, nullptr);
  }
}

void Session::emit_tables() {
  auto& t = tables();
  std::lock_guard lock(t.mutex);
  for (; emitted_strings < t.strings.size(); ++emitted_strings)
    writer->add_string(static_cast<std::uint32_t>(emitted_strings + 1), t.strings[emitted_strings]);
  for (; emitted_pools < t.pools.size(); ++emitted_pools) writer->add_pool(t.pools[emitted_pools]);
  for (; emitted_scopes < t.scopes.size(); ++emitted_scopes)
    writer->add_scope(t.scopes[emitted_scopes]);
  for (auto* tb = registry.load(std::memory_order_acquire); tb; tb = tb->next) {
    if (tb->announced) continue;
    tb->announced = true;
    writer->add_thread(ThreadInfo{tb->id, tb->tid, tb->name});
  }
}

std::optional<HeapProbe::Figures> Session::heap_figures_if_sample_due() {
  // Not after a fatal signal: mallinfo2() takes every malloc arena's lock,
  // and the thread the signal stopped may hold one.
  if (now_ns() < next_sample_ns || ended_by_signal.load(std::memory_order_relaxed) != 0)
    return std::nullopt;
  // Normally answered in microseconds; see heap_probe.hpp for why not here.
  constexpr int kHeapProbeWaitMs = 20;
  if (!g_glibc_heap.load(std::memory_order_relaxed)) return HeapProbe::Figures{};
  return heap_probe.read(kHeapProbeWaitMs);
}

void Session::emit_sample(const HeapProbe::Figures& heap) {
  Event e;
  e.kind = EventKind::sample;
  // In order with the events, and without squashing them: stamped at the
  // last pass's cut, since events stamped after it may still wait to be
  // drained. A sample stamped `now` moved each of them up to its time
  // (to_ns never goes back), tens of thousands in a row.
  e.time_ns = clock.to_ns(last_cut);
  e.address = sample_rss ? rss_bytes(statm) : 0;
  e.size = heap.in_use;
  e.requested = heap.reserved;
  if (auto probe = g_device_free_probe.load(std::memory_order_acquire)) e.aux = probe();
  writer->add_event(e);
}

sigset_t writer_blocked_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM, SIGTERM, SIGUSR1, SIGUSR2, SIGXCPU})
    sigaddset(&set, sig);
  return set;
}

void Session::emit_signal_mark(int sig) {
  // Named by a string when the table is free; the handler's thread may hold
  // its lock (interrupted in intern_string), and the number alone suffices.
  std::uint32_t name_id = 0;
  auto& t = tables();
  if (std::unique_lock lock(t.mutex, std::try_to_lock); lock.owns_lock()) {
    const char* abbrev = sigabbrev_np(sig);
    std::string name = abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
    auto [it, inserted] = t.string_ids.try_emplace(name, 0);
    if (inserted) {
      t.strings.push_back(name);
      it->second = static_cast<std::uint32_t>(t.strings.size());
    }
    name_id = it->second;
  }
  if (name_id != 0) emit_tables();
  Event e;
  e.kind = EventKind::mark;
  e.detail = static_cast<std::uint8_t>(MarkDetail::signal);
  e.time_ns = clock.to_ns(clock.raw_now());
  e.size = static_cast<std::uint64_t>(sig);
  e.aux = name_id;
  writer->add_event(e);
}

// Chunks the writer dropped to leave the file system's last space to the
// program (TraceWriter::keep_space_free): said on stderr and to memtrail run.
void Session::say_space_loss() {
  std::uint64_t lost = writer->events_lost_for_space();
  if (lost == 0) return;
  std::string what =
      std::to_string(lost) + " events not written to " + path + ": " + writer->space_loss_words();
  detail::diagnostic("memtrail: %s\n", what.c_str());
  if (is_run_directory_output(options.output)) note_lost_events(what);
}

void Session::stop_tracing(const std::exception& e) {
  detail::diagnostic("memtrail: %s; tracing stopped\n", e.what());
  failed.store(true);
  detail::g_tracing.store(false, std::memory_order_release);
}

// Sleeps until the next drain period, flush or sample is due, or until
// woken (a flush request, the exit, a thread short of blocks). No wait when
// the last pass left events behind (`more`).
void Session::wait_for_work(bool more, bool stood_aside) {
  std::uint64_t now = now_ns();
  std::uint64_t wait_ns = more ? 0 : (stood_aside ? kAsideCheckMs : kDrainPeriodMs) * kMs;
  for (std::uint64_t deadline : {next_flush_ns, next_sample_ns})
    if (deadline > now)
      wait_ns = std::min(wait_ns, deadline - now);
    else
      wait_ns = 0;
  // Read before the checks: a wake() after this read changes the word,
  // and the wait then returns at once.
  std::uint32_t seen = wake_word.load(std::memory_order_acquire);
  if (wait_ns > 0 &&
      flush_requested.load(std::memory_order_acquire) ==
          flush_done.load(std::memory_order_acquire) &&
      !exit_requested.load(std::memory_order_acquire)) {
    timespec most{static_cast<time_t>(wait_ns / 1'000'000'000),
                  static_cast<long>(wait_ns % 1'000'000'000)};
    ::syscall(SYS_futex, &wake_word, FUTEX_WAIT_PRIVATE, seen, &most, nullptr, 0);
  }
}

// One round of the writer under work_mutex: a drain pass (unless program
// threads drain: `stood_aside`), a due sample, a due or requested flush,
// and at the exit the end of the file. True when the pass left events
// behind. An encoder failure stops tracing.
bool Session::writer_round(bool stood_aside, bool exiting, std::uint64_t ticket,
                           std::uint64_t asked_at, const std::optional<HeapProbe::Figures>& heap) {
  bool more = false;
  try {
    if (!stood_aside) {
      more = drain();
      if (address_model == detail::AddressModel::automatic) writer->set_address_model(!more);
    }
    std::uint64_t now = now_ns();
    // Not after a fatal signal: mallinfo2() takes every malloc arena's
    // lock, and the thread the signal stopped may hold one.
    if (heap && ended_by_signal.load(std::memory_order_relaxed) == 0) {
      emit_sample(*heap);
      next_sample_ns = now + options.sample_interval_ms * kMs;
    }
    if (now >= next_flush_ns ||
        (ticket != flush_done.load(std::memory_order_relaxed) && (!more || last_cut > asked_at)) ||
        exiting) {
      writer->flush();
      next_flush_ns = now + options.flush_interval_ms * kMs;
    }
    writer->write_pending();  // chunks program threads flushed while they drained
    if (exiting) {
      if (int sig = ended_by_signal.load(std::memory_order_acquire)) emit_signal_mark(sig);
      writer->finish();
      tally.remove();  // whole: nothing for memtrail run to count
      say_space_loss();
      trace_finished.store(true, std::memory_order_release);
    }
  } catch (const std::exception& e) {
    stop_tracing(e);
    more = false;
  }
  return more;
}

// The exit scan's flush (flush_all_threads_lean), served with nothing left
// to drain: what the writer builds chunks in and the warm event blocks go
// back before the scan takes its scratch, so the two do not add up at the
// process's peak (cc1plus: ~3 MiB, issue 28). Under work_mutex.
void Session::release_scratch_if_asked() {
  if (!release_scratch_asked.load(std::memory_order_acquire)) return;
  release_scratch_asked.store(false, std::memory_order_relaxed);
  if (writer && !failed.load(std::memory_order_relaxed)) writer->release_scratch();
  blocks.release_warm();
}

namespace {
// Session::table_step: start_session wants the trace file handed over; the
// writer's table is private and holds its copy; start_session closed the
// program's; the writer's table is the program's (unshare refused).
constexpr std::uint32_t kTableHandOverWanted = 1, kTablePrivate = 2, kTableHandedOver = 3,
                        kTableShared = 4;

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t seen) {
  ::syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, seen, nullptr, nullptr, 0);
}
void futex_wake(std::atomic<std::uint32_t>& word) {
  ::syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}
}  // namespace

// A private table keeps the trace file out of the program's reach: a
// daemon's close-all or dup2 onto 1023 cannot touch it, the program's
// lowest free number and descriptor count are as untraced, and a fork
// child (a copy of a program thread's table) never holds it. At start the
// file start_session opened (its errors are said there, synchronously) is
// kept in the copy and then closed on the program's side; after a pause
// (resume_threads) nothing is kept: the file is reopened by its path.
void Session::enter_own_table() {
  const bool hand_over = table_step.load(std::memory_order_acquire) == kTableHandOverWanted;
  {
    // No program dup2 moves one between the look and the copy. The other
    // registered ones (the run directory's two) stay in
    // both tables at the same numbers (private_fd.hpp).
    auto lock = detail::private_fd_lock();
    int keep[12];
    keep[0] = hand_over && writer ? writer->descriptor() : -1;
    if (hand_over) private_trace_fd = keep[0];
    int n = 1 + detail::registered_private_fds_locked(keep + 1, 10);
    // stderr, when it is a regular file, stays too: its lines must share
    // the program's (and memtrail run's) offset, which a reopen through
    // /proc/self/fd/2 would not (diagnostics.cpp); a file has no reader
    // waiting for its EOF, as a pipe has.
    struct stat err;
    if (::fstat(2, &err) == 0 && S_ISREG(err.st_mode)) keep[n++] = 2;
    own_table = detail::enter_private_table(keep, n);
  }
  if (own_table && writer) writer->write_only_from_this_thread();
  if (own_table && !hand_over) reopen_run_directory_in_writer();  // after a pause
  if (!hand_over) return;
  table_step.store(own_table ? kTablePrivate : kTableShared, std::memory_order_release);
  futex_wake(table_step);
  for (std::uint32_t step;
       own_table && (step = table_step.load(std::memory_order_acquire)) != kTableHandedOver;)
    futex_wait(table_step, step);
}

void Session::hand_over_trace_file() {
  std::uint32_t step;
  while ((step = table_step.load(std::memory_order_acquire)) == kTableHandOverWanted)
    futex_wait(table_step, step);
  if (step == kTablePrivate) {
    auto lock = detail::private_fd_lock();
    writer->hand_over_to_private_table(private_trace_fd);
    hand_over_run_directory_locked();
  }
  table_step.store(kTableHandedOver, std::memory_order_release);
  futex_wake(table_step);
}

// In a private table statm takes no number of the program's. Sharing the
// program's (unshare refused), a soft limit below 64 leaves no number the
// program does not count on: no RSS samples then, said once.
void Session::open_statm() {
  constexpr int kRoomyFdLimit = 64;
  if (!own_table && detail::private_fd_ceiling() < kRoomyFdLimit) {
    sample_rss = false;
    detail::diagnostic(
        "memtrail: RLIMIT_NOFILE %d: the tracer's descriptors take numbers the program "
        "may need; RSS is not sampled\n",
        detail::private_fd_ceiling());
    return;
  }
  if (!own_table) detail::register_private_fd(&statm.fd);
  auto lock = detail::private_fd_lock();
  if (statm.fd < 0) statm.adopt(::open("/proc/self/statm", O_RDONLY | O_CLOEXEC));
}

void Session::writer_main() {
  t_internal = 1;  // this thread is never traced
  detail::t_recorder_thread = true;
  enter_own_table();
  if (sample_rss) open_statm();
  pthread_setname_np(pthread_self(), "memtrail-writer");
  // The glibc model makes alloc addresses ~2 bytes cheaper in the file but
  // costs the drain ~40 ns an event; on two cores a drain that falls
  // behind sets the program's pace, so by default a chunk uses the model
  // only when the pass before it was not capped (the writer kept up).
  std::uint64_t now = now_ns();
  next_flush_ns = now + options.flush_interval_ms * kMs;
  next_sample_ns = options.sample_interval_ms ? now : UINT64_MAX;
  try {
    std::lock_guard work(work_mutex);
    modules.rescan([&](const ModuleInfo& m) { writer->add_module(m); });
    take_inherited_blocks();
  } catch (const std::exception& e) {
    detail::diagnostic("memtrail: %s\n", e.what());
    failed.store(true);
  }
  bool more = false;  // the last pass left events behind: no wait
  // The flush ticket being served and the raw time the writer first saw it:
  // every event its requester made before asking is stamped earlier.
  std::uint64_t serving = 0, asked_at = 0;
  bool stood_aside = false;  // program threads drain: look again soon
  for (;;) {
    wait_for_work(more, stood_aside);
    // A due sample's glibc figures are read before the lock: the probe
    // thread may wait for a core (one CPU, busy program threads), and the
    // program threads that drain need the lock meanwhile.
    std::optional<HeapProbe::Figures> heap = heap_figures_if_sample_due();
    std::lock_guard work(work_mutex);
    std::uint64_t ticket = flush_requested.load(std::memory_order_acquire);
    if (ticket != serving) {
      serving = ticket;
      asked_at = clock.raw_now();
    }
    bool exiting = exit_requested.load(std::memory_order_acquire);
    // Flushes, the exit and threads waiting for blocks are the writer's
    // even while program threads drain (drain_sharing.cpp).
    now = now_ns();
    stood_aside = !exiting && ticket == flush_done.load(std::memory_order_relaxed) &&
                  now < next_flush_ns && block_waiters.load() == 0 &&
                  count_busy_producers() >= cores;
    more = !failed.load(std::memory_order_relaxed) &&
           writer_round(stood_aside, exiting, ticket, asked_at, heap);
    detail::sample_own_mappings();  // MEMTRAIL_MEMORY_DEBUG only
    // A flush is served once every event stamped before it was asked for is
    // in the file: a thread that keeps allocating (one still running at
    // exit) must not hold it until the drain takes everything, which it
    // may never do (the exit once waited out two 5 s flush timeouts so).
    if (!more) release_scratch_if_asked();
    if (!more || last_cut > asked_at) flush_done.store(ticket, std::memory_order_release);
    if (more) continue;
    if (exiting) break;
    if (pause_requested.load(std::memory_order_acquire) &&
        flush_done.load(std::memory_order_acquire) >= pause_ticket) {
      // Paused (process_hooks.cpp): everything before it is in the file. A
      // private table dies with this thread, its descriptors with it.
      if (own_table) {
        writer->lose_private_descriptor();
        statm.fd = -1;
      }
      return;
    }
  }
  // Under the lock: a fork's prepare handler holds it, and the child
  // closes what the parent's session still holds (process_hooks.cpp).
  std::lock_guard work(work_mutex);
  writer.reset();  // closes the file
  if (!own_table) detail::unregister_private_fd(&statm.fd);
  statm.release();
  writer_done.store(true, std::memory_order_release);
}

}  // namespace memtrail::runtime
