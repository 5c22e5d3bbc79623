// The progress line of long reads (progress_line.hpp).
#include "progress_line.hpp"

#include <dirent.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "memtrail/progress_text.hpp"

namespace memtrail::cli {

namespace {

// How far this process has read `path`: the offset of its open descriptor
// (/proc/self/fdinfo). The reader buffers ahead, so this is bytes read, which
// is what the line says. 0 when the file is not open.
std::uint64_t read_offset(const std::string& path) {
  char real[PATH_MAX];
  if (!realpath(path.c_str(), real)) return 0;
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return 0;
  std::uint64_t pos = 0;
  while (dirent* e = readdir(dir)) {
    char link[PATH_MAX];
    std::string fd_path = std::string("/proc/self/fd/") + e->d_name;
    ssize_t n = readlink(fd_path.c_str(), link, sizeof link - 1);
    if (n <= 0) continue;
    link[n] = '\0';
    if (std::string(link) != real) continue;
    std::ifstream info(std::string("/proc/self/fdinfo/") + e->d_name);
    std::string key;
    std::uint64_t value = 0;
    while (info >> key >> value)
      if (key == "pos:") pos = std::max(pos, value);
  }
  closedir(dir);
  return pos;
}

}  // namespace

ProgressLine::ProgressLine(std::string command, std::string trace, bool enabled)
    : command_(std::move(command)),
      trace_(std::move(trace)),
      enabled_(enabled),
      start_(std::chrono::steady_clock::now()) {
  std::error_code ec;
  if (enabled_) total_ = std::filesystem::file_size(trace_, ec);
  if (ec) enabled_ = false;
}

ProgressLine::~ProgressLine() {
  done();
}

ProgressFn ProgressLine::fn() {
  if (!enabled_) return {};
  return [this](std::uint64_t) {
    tick();
    return true;
  };
}

void ProgressLine::tick() {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (elapsed < 1.0) return;  // short work: no line at all
  std::string line = format_progress(command_, read_offset(trace_), total_, elapsed);
  std::fprintf(stderr, "\r%s\033[K", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::done() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

bool stderr_is_terminal() {
  return isatty(STDERR_FILENO) == 1;
}

Analysis analyze_with_progress(const std::string& command, const std::string& trace,
                               const AnalysisOptions& options) {
  ProgressLine line(command, trace, stderr_is_terminal());
  return analyze(trace, options, line.fn());  // the line is erased before returning
}

}  // namespace memtrail::cli
