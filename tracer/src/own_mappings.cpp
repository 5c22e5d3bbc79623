// The tracer's own mappings by purpose (memtrail/detail/own_mappings.hpp).
#include "memtrail/detail/own_mappings.hpp"

#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "block_pool.hpp"
#include "memtrail/detail/diagnostics.hpp"

namespace memtrail::detail {
namespace {

constexpr int kPurposes = static_cast<int>(OwnPurpose::count);
const char* const kPurposeNames[] = {
    "heap chunks",  "heap large", "heap cached", "event blocks",
    "thread state", "stack trie", "addr tables", "other",
};
static_assert(std::size(kPurposeNames) == kPurposes, "a name for every purpose");
constexpr std::uintptr_t kPage = 4096;
constexpr std::uint64_t kSampleEveryNs = 20'000'000;

struct Range {
  std::uintptr_t start, end;
  int purpose;
};

// Unordered; a range taken away is replaced by the last one. Past its size
// mappings go uncounted, and the report says how many.
constexpr int kMaxRanges = 8192;
Range g_ranges[kMaxRanges];
int g_range_count = 0;
std::size_t g_unrecorded = 0;
runtime::SpinLock g_ranges_lock;

enum State : int { kUnread, kOff, kOn };
std::atomic<int> g_state{kUnread};

struct Figures {
  std::size_t mapped[kPurposes] = {};
  std::size_t resident[kPurposes] = {};
  long process_peak_kib = 0;  // getrusage's ru_maxrss when taken
};

// Sampling state: the writer samples, the session's end samples and
// reports; one at a time.
runtime::SpinLock g_sample_lock;
Range g_snapshot[kMaxRanges];
Figures g_at_peak, g_largest, g_at_scan;
bool g_scanned = false;
std::uint64_t g_last_sample_ns = 0;

bool on() noexcept {
  int state = g_state.load(std::memory_order_relaxed);
  if (state == kUnread) {
    const char* value = std::getenv("MEMTRAIL_MEMORY_DEBUG");
    state = value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0 ? kOn : kOff;
    g_state.store(state, std::memory_order_relaxed);
  }
  return state == kOn;
}

void take_range(int i) {
  g_ranges[i] = g_ranges[--g_range_count];
}

// Removes [start, end) from the noted ranges: whole ones, ends, or a middle
// (the own heap trims its over-sized mappings; a table's old part goes).
void cut_locked(std::uintptr_t start, std::uintptr_t end) {
  for (int i = 0; i < g_range_count; ++i) {
    Range& r = g_ranges[i];
    if (r.end <= start || r.start >= end) continue;
    if (start <= r.start && end >= r.end) {
      take_range(i--);
    } else if (start <= r.start) {
      r.start = end;
    } else if (end >= r.end) {
      r.end = start;
    } else if (g_range_count < kMaxRanges) {
      g_ranges[g_range_count++] = Range{end, r.end, r.purpose};
      r.end = start;
    } else {
      r.end = start;
      ++g_unrecorded;
    }
  }
}

std::size_t resident_bytes(std::uintptr_t start, std::uintptr_t end) {
  constexpr std::size_t kBatch = 512;  // pages per mincore call
  unsigned char pages[kBatch];
  std::size_t resident = 0;
  for (std::uintptr_t at = start; at < end; at += kBatch * kPage) {
    std::size_t count = std::min<std::size_t>(kBatch, (end - at) / kPage);
    // Unmapped meanwhile (ENOMEM): counted as not resident.
    if (::mincore(reinterpret_cast<void*>(at), count * kPage, pages) != 0) continue;
    for (std::size_t i = 0; i < count; ++i) resident += (pages[i] & 1) * kPage;
  }
  return resident;
}

Figures measure() {
  g_ranges_lock.lock();
  int count = g_range_count;
  std::copy(g_ranges, g_ranges + count, g_snapshot);
  g_ranges_lock.unlock();
  Figures f;
  for (int i = 0; i < count; ++i) {
    const Range& r = g_snapshot[i];
    f.mapped[r.purpose] += r.end - r.start;
    f.resident[r.purpose] += resident_bytes(r.start, r.end);
  }
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  f.process_peak_kib = usage.ru_maxrss;
  return f;
}

std::size_t total(const std::size_t (&bytes)[kPurposes]) {
  std::size_t sum = 0;
  for (std::size_t b : bytes) sum += b;
  return sum;
}

// Under g_sample_lock; returns the sample.
Figures sample_locked() {
  Figures now = measure();
  // The first sample after the process's peak RSS rose: what the tracer
  // held then (the peak itself fell between two samples).
  if (now.process_peak_kib > g_at_peak.process_peak_kib) g_at_peak = now;
  // The instant the tracer held the most (the exit scan's, often): one
  // sample, so its parts add up. A peak that rose during the scan is
  // sampled only after the scan let its scratch go.
  if (total(now.resident) > total(g_largest.resident)) g_largest = now;
  return now;
}

std::uint64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + ts.tv_nsec;
}

double mib(std::size_t bytes) {
  return static_cast<double>(bytes) / (1 << 20);
}

// What the exit scan's sample found resident, on a line of its own (the
// table's columns are the process's peak and the tracer's most): whether
// the writer and the warm event blocks had gone before the scan's scratch.
void report_scan_sample() {
  char line[512];
  int n = std::snprintf(line, sizeof line, "memtrail: resident at the exit scan, MiB:");
  for (int p = 0; p < kPurposes && n > 0 && n < static_cast<int>(sizeof line); ++p)
    n += std::snprintf(line + n, sizeof line - n, " %s %.2f,", kPurposeNames[p],
                       mib(g_at_scan.resident[p]));
  if (n > 0 && n < static_cast<int>(sizeof line))
    std::snprintf(line + n, sizeof line - n, " total %.2f", mib(total(g_at_scan.resident)));
  diagnostic("%s\n", line);
}

}  // namespace

bool own_memory_debug() noexcept {
  return on();
}

void sample_own_mappings() noexcept {
  if (!on()) return;
  std::uint64_t now = monotonic_ns();
  if (now - g_last_sample_ns < kSampleEveryNs) return;
  g_sample_lock.lock();
  g_last_sample_ns = now;
  sample_locked();
  g_sample_lock.unlock();
}

void sample_own_mappings_now() noexcept {
  if (!on()) return;
  g_sample_lock.lock();
  g_last_sample_ns = monotonic_ns();
  g_at_scan = sample_locked();
  g_scanned = true;
  g_sample_lock.unlock();
}

void report_own_mappings() noexcept {
  if (!on()) return;
  g_sample_lock.lock();
  sample_locked();
  Figures end = measure();
  diagnostic(
      "memtrail: the tracer's own mappings (MEMTRAIL_MEMORY_DEBUG), MiB: at the process's "
      "peak RSS (%.1f MiB), when the tracer held the most, at the end\n",
      g_at_peak.process_peak_kib / 1024.0);
  diagnostic("memtrail: %-12s %9s %9s %9s %9s %9s %9s\n", "purpose", "peak map", "peak res",
             "most map", "most res", "end map", "end res");
  for (int p = 0; p < kPurposes; ++p)
    diagnostic("memtrail: %-12s %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n", kPurposeNames[p],
               mib(g_at_peak.mapped[p]), mib(g_at_peak.resident[p]), mib(g_largest.mapped[p]),
               mib(g_largest.resident[p]), mib(end.mapped[p]), mib(end.resident[p]));
  diagnostic("memtrail: %-12s %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n", "total",
             mib(total(g_at_peak.mapped)), mib(total(g_at_peak.resident)),
             mib(total(g_largest.mapped)), mib(total(g_largest.resident)), mib(total(end.mapped)),
             mib(total(end.resident)));
  if (g_scanned) report_scan_sample();
  if (g_unrecorded != 0)
    diagnostic("memtrail: %zu mappings not counted (the table was full)\n", g_unrecorded);
  g_sample_lock.unlock();
}

}  // namespace memtrail::detail

extern "C" void memtrail_own_mapped(const void* start, std::size_t bytes, int purpose) {
  using namespace memtrail::detail;
  if (!on() || bytes == 0) return;
  auto at = reinterpret_cast<std::uintptr_t>(start) & ~(kPage - 1);
  auto end = (reinterpret_cast<std::uintptr_t>(start) + bytes + kPage - 1) & ~(kPage - 1);
  g_ranges_lock.lock();
  cut_locked(at, end);  // a range the kernel handed out again
  if (g_range_count < kMaxRanges)
    g_ranges[g_range_count++] = Range{at, end, purpose};
  else
    ++g_unrecorded;
  g_ranges_lock.unlock();
}

extern "C" void memtrail_own_unmapped(const void* start, std::size_t bytes) {
  using namespace memtrail::detail;
  if (!on() || bytes == 0) return;
  auto at = reinterpret_cast<std::uintptr_t>(start) & ~(kPage - 1);
  auto end = (reinterpret_cast<std::uintptr_t>(start) + bytes + kPage - 1) & ~(kPage - 1);
  g_ranges_lock.lock();
  cut_locked(at, end);
  g_ranges_lock.unlock();
}
