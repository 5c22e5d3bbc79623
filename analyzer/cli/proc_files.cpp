// Reading another process's /proc files (proc_files.hpp).
#include "proc_files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

namespace memtrail::cli {

std::string proc_path(pid_t pid, const char* leaf) {
  return "/proc/" + std::to_string(pid) + "/" + leaf;
}

std::optional<std::string> read_proc_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
  ::close(fd);
  if (n < 0) return std::nullopt;
  return text;
}

char process_state(pid_t pid) {
  std::optional<std::string> stat = read_proc_file(proc_path(pid, "stat"));
  if (!stat) return 0;
  auto paren = stat->rfind(')');  // the command name may hold spaces
  if (paren == std::string::npos || paren + 2 >= stat->size()) return 0;
  return (*stat)[paren + 2];
}

bool process_alive(pid_t pid) {
  char state = process_state(pid);
  return state != 0 && state != 'Z' && state != 'X';
}

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

}  // namespace memtrail::cli
