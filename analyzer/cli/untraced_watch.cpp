// `memtrail run`'s watch for images without the tracer (untraced_watch.hpp).
#include "untraced_watch.hpp"

#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>

#include "memtrail/run_index.hpp"
#include "proc_files.hpp"

namespace memtrail::cli {
namespace {

// The time between two walks of the program's descendants. An image that
// lives shorter may escape (docs/tracing.md says how often, measured); a
// walk of a few processes costs tens of microseconds of run's own time.
constexpr auto kWalkInterval = std::chrono::milliseconds(2);

// What /proc/PID/stat says of a process's current image.
struct ImageStat {
  char state = 0;
  unsigned long long start_time = 0, vsize = 0, start_stack = 0, env_start = 0, env_end = 0;
};

// One process image: its process (pid, start time), and where its stack
// and environment lie, which each exec maps anew.
using ImageKey = std::tuple<pid_t, unsigned long long, unsigned long long, unsigned long long,
                            unsigned long long>;

ImageKey key_of(pid_t pid, const ImageStat& s) {
  return {pid, s.start_time, s.start_stack, s.env_start, s.env_end};
}

bool read_stat(pid_t pid, ImageStat* out) {
  std::optional<std::string> text = read_proc_file(proc_path(pid, "stat"));
  if (!text) return false;
  auto paren = text->rfind(')');  // the command name may hold spaces
  if (paren == std::string::npos || paren + 2 >= text->size()) return false;
  // Fields from 3 (state) on; 22 start time, 23 vsize, 28 start of the
  // stack, 50 and 51 the environment's bounds.
  const char* p = text->c_str() + paren + 2;
  out->state = *p;
  unsigned long long fields[52] = {};
  int field = 3;
  while (field < 51 && (p = std::strchr(p, ' ')) != nullptr)
    fields[++field] = std::strtoull(++p, nullptr, 10);
  if (field < 51) return false;
  out->start_time = fields[22];
  out->vsize = fields[23];
  out->start_stack = fields[28];
  out->env_start = fields[50];
  out->env_end = fields[51];
  return true;
}

// The process's children, those of every one of its threads.
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> children;
  const std::string tasks = proc_path(pid, "task");
  DIR* d = ::opendir(tasks.c_str());
  if (d == nullptr) return children;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::optional<std::string> text = read_proc_file(tasks + "/" + e->d_name + "/children");
    const char* p = text ? text->c_str() : "";
    for (char* end; *p != '\0'; p = end) {
      long child = std::strtol(p, &end, 10);
      if (end == p) break;
      children.push_back(static_cast<pid_t>(child));
    }
  }
  ::closedir(d);
  return children;
}

// Whether an environment ("NAME=value\0" entries) holds what a traced image
// needs: LD_PRELOAD naming the tracer, and MEMTRAIL_OUTPUT.
bool environment_traces(std::string_view environment) {
  bool preload = false, output = false;
  while (!environment.empty()) {
    std::string_view entry = environment.substr(0, environment.find('\0'));
    if (entry.starts_with("LD_PRELOAD=") && entry.find("libmemtrail_preload.so") != entry.npos)
      preload = true;
    if (entry.starts_with("MEMTRAIL_OUTPUT=")) output = true;
    environment.remove_prefix(std::min(environment.size(), entry.size() + 1));
  }
  return preload && output;
}

bool is_memtrail_itself(pid_t pid) {
  struct stat image, self;
  return ::stat(proc_path(pid, "exe").c_str(), &image) == 0 &&
         ::stat("/proc/self/exe", &self) == 0 && image.st_dev == self.st_dev &&
         image.st_ino == self.st_ino;
}

std::string executable_of(pid_t pid) {
  char path[PATH_MAX];
  ssize_t n = ::readlink(proc_path(pid, "exe").c_str(), path, sizeof path - 1);
  if (n > 0) return std::string(path, static_cast<std::size_t>(n));
  std::optional<std::string> comm = read_proc_file(proc_path(pid, "comm"));
  return comm && !comm->empty() ? comm->substr(0, comm->size() - 1) : "an unknown program";
}

// Whether the tracer's library is mapped in the process: an image whose
// environment strings the program overwrote (setproctitle, as PostgreSQL
// and nginx do, and their forked children) is still seen traced.
bool maps_hold_tracer(pid_t pid) {
  std::optional<std::string> maps = read_proc_file(proc_path(pid, "maps"));
  return maps && maps->find("libmemtrail_preload.so") != std::string::npos;
}

enum class Verdict { traced, untraced, unreadable, not_yet };

// Reads the image's environment (its mappings too when that lacks the
// tracing variables), then checks that the image is still the one `before`
// describes and still has its memory (an exiting process shows an empty
// environment and no mappings).
Verdict judge(pid_t pid, const ImageStat& before) {
  std::optional<std::string> environment = read_proc_file(proc_path(pid, "environ"));
  bool traced = environment && (environment_traces(*environment) || maps_hold_tracer(pid));
  ImageStat after;
  if (!read_stat(pid, &after) || key_of(pid, after) != key_of(pid, before) || after.vsize == 0 ||
      after.state == 'Z' || after.state == 'X')
    return Verdict::not_yet;
  // Not ours to read (a set-user-ID image): the exec interposers announce
  // those.
  if (!environment) return Verdict::unreadable;
  return traced ? Verdict::traced : Verdict::untraced;
}

// The run's list line for an image that ran without the tracer.
std::string untraced_line(pid_t pid) {
  return std::to_string(pid) + "\tmissing\tran without the tracer: " + executable_of(pid) +
         " (exec'd with LD_PRELOAD or MEMTRAIL_OUTPUT out of its environment where no "
         "interposer sees it: a raw execve system call, as Go's os/exec makes, or glibc's own)";
}

// One walk over `root` and its descendants: each image not judged yet is.
void walk_once(pid_t root, std::set<ImageKey>& judged, std::vector<std::string>& found) {
  std::vector<pid_t> pending{root};
  std::set<pid_t> walked;
  while (!pending.empty()) {
    pid_t pid = pending.back();
    pending.pop_back();
    if (!walked.insert(pid).second) continue;
    for (pid_t child : children_of(pid)) pending.push_back(child);
    ImageStat stat;
    if (!read_stat(pid, &stat) || stat.env_start == 0 || stat.vsize == 0) continue;
    if (judged.count(key_of(pid, stat)) || is_memtrail_itself(pid)) continue;  // run's own fork
    Verdict verdict = judge(pid, stat);
    if (verdict == Verdict::not_yet) continue;
    judged.insert(key_of(pid, stat));
    if (verdict == Verdict::untraced) found.push_back(untraced_line(pid));
  }
}

}  // namespace

UntracedWatch::UntracedWatch(pid_t root) : thread_([this, root] { watch(root); }) {}

UntracedWatch::~UntracedWatch() {
  stop();
}

std::vector<std::string> UntracedWatch::stop() {
  stopping_.store(true);
  if (thread_.joinable()) thread_.join();
  return found_;
}

void UntracedWatch::watch(pid_t root) {
  std::set<ImageKey> judged;
  while (!stopping_.load()) {
    walk_once(root, judged, found_);
    std::this_thread::sleep_for(kWalkInterval);
  }
}

}  // namespace memtrail::cli
