// Judging a process image by /proc (image_judge.hpp).
#include "image_judge.hpp"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>

#include "proc_files.hpp"

namespace memtrail::cli {
namespace {

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

}  // namespace

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

bool has_image(const ImageStat& stat) {
  return stat.env_start != 0 && stat.vsize != 0 && stat.state != 'Z' && stat.state != 'X';
}

Verdict judge(pid_t pid, const ImageStat& before) {
  std::optional<std::string> environment = read_proc_file(proc_path(pid, "environ"));
  bool traced = environment && (environment_traces(*environment) || maps_hold_tracer(pid));
  ImageStat after;
  if (!read_stat(pid, &after) || key_of(pid, after) != key_of(pid, before) || !has_image(after))
    return Verdict::not_yet;
  if (!environment) return Verdict::unreadable;
  return traced ? Verdict::traced : Verdict::untraced;
}

// Whether the tracer's library is mapped in the process: an image whose
// environment strings the program overwrote (setproctitle, as PostgreSQL
// and nginx do, and their forked children) is still seen traced.
bool maps_hold_tracer(pid_t pid) {
  std::optional<std::string> maps = read_proc_file(proc_path(pid, "maps"));
  return maps && maps->find("libmemtrail_preload.so") != std::string::npos;
}

bool traces_elsewhere(pid_t pid, const std::string& directory) {
  std::optional<std::string> environment = read_proc_file(proc_path(pid, "environ"));
  std::string_view rest = environment ? *environment : std::string_view();
  auto without_slash = [](std::string_view path) {
    while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
    return path;
  };
  while (!rest.empty()) {
    std::string_view entry = rest.substr(0, rest.find('\0'));
    if (entry.starts_with("MEMTRAIL_OUTPUT="))
      return without_slash(entry.substr(16)) != without_slash(directory);
    rest.remove_prefix(std::min(rest.size(), entry.size() + 1));
  }
  return false;
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

std::string untraced_line(pid_t pid, const std::string& executable) {
  return std::to_string(pid) + "\tmissing\tran without the tracer: " + executable +
         " (exec'd with LD_PRELOAD or MEMTRAIL_OUTPUT out of its environment where no "
         "interposer sees it: a raw execve system call, as Go's os/exec makes, or glibc's own)";
}

}  // namespace memtrail::cli
