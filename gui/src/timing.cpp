#include "timing.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <set>

namespace memtrail::gui {
namespace {

std::chrono::steady_clock::time_point g_start = std::chrono::steady_clock::now();
std::mutex g_lock;
std::set<std::string> g_marked;

// CPU time of the whole process (every thread) since it started: on a
// loaded machine the benchmarks compare this, not only the wall clock.
double process_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

const char* setting() {
  const char* v = std::getenv("MEMTRAIL_GUI_TIMING");
  return v && *v && std::strcmp(v, "0") != 0 ? v : nullptr;
}

}  // namespace

void timing_start() {
  g_start = std::chrono::steady_clock::now();
}

bool timing_enabled() {
  return setting() != nullptr;
}

bool timing_exit() {
  const char* v = setting();
  return v && std::strcmp(v, "exit") == 0;
}

bool timing_mark(const std::string& event) {
  if (!timing_enabled()) return false;
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - g_start).count();
  std::lock_guard lock(g_lock);
  if (!g_marked.insert(event).second) return false;
  std::fprintf(stderr, "memtrail-gui: timing %s %.1f cpu %.1f\n", event.c_str(), ms,
               process_cpu_ms());
  std::fflush(stderr);
  return true;
}

bool timing_marked(const std::string& event) {
  std::lock_guard lock(g_lock);
  return g_marked.count(event) != 0;
}

}  // namespace memtrail::gui
