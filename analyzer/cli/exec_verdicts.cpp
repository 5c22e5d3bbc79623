// Which exec'd images ran without the tracer (exec_verdicts.hpp).
#include "exec_verdicts.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "memtrail/run_index.hpp"
#include "memtrail/trace_file.hpp"

namespace memtrail::cli {
namespace {

// The start times (CLOCK_MONOTONIC) of the run directory's traces, by the
// pid in their name, for the pids of `wanted` only.
std::multimap<pid_t, std::uint64_t> trace_starts(const std::string& directory,
                                                 const std::set<pid_t>& wanted) {
  std::multimap<pid_t, std::uint64_t> starts;
  DIR* d = ::opendir(directory.c_str());
  if (d == nullptr) return starts;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.size() < 5 || name.compare(name.size() - 4, 4, ".mtr") != 0) continue;
    auto pid = static_cast<pid_t>(std::atoi(name.c_str()));
    if (!wanted.count(pid)) continue;
    TraceReader reader(directory + "/" + name);
    if (reader.header_error().empty()) starts.emplace(pid, reader.header().start_monotonic_ns);
  }
  ::closedir(d);
  return starts;
}

// Pids of the run's list that announced an exec or were said missing by
// the tracer (the list's own judgment covers them).
std::set<pid_t> pids_listed(const std::string& directory) {
  std::set<pid_t> pids;
  std::ifstream in(directory + "/" + kRunMissingFile);
  for (std::string line; std::getline(in, line);) {
    auto tab = line.find('\t');
    if (tab == std::string::npos) continue;
    if (line.compare(tab, 6, "\texec\t") == 0 || line.compare(tab, 9, "\tmissing\t") == 0)
      pids.insert(static_cast<pid_t>(std::atoi(line.c_str())));
  }
  return pids;
}

bool has_trace_within(const std::multimap<pid_t, std::uint64_t>& starts, const ExecImage& image) {
  auto [first, last] = starts.equal_range(image.namespace_pid);
  for (auto it = first; it != last; ++it)
    if (it->second > image.exec_ns && it->second < image.end_ns) return true;
  return false;
}

// The pid's latest image, still running at the run's end (an orphan):
// traced when it has mapped the tracer (its trace may be a moment away:
// asked again after a pause, for an image still in the loader; one pause
// per run, `paused` once it was made).
bool still_running_with_tracer(const ExecImage& image, bool* paused) {
  ImageStat stat;
  for (int ask = 0; ask < 2; ++ask) {
    if (image.end_ns != std::numeric_limits<std::uint64_t>::max() || !read_stat(image.pid, &stat) ||
        !has_image(stat))
      return false;
    if (maps_hold_tracer(image.pid)) return true;
    if (!*paused) ::usleep(100'000);
    *paused = true;
  }
  return false;
}

std::string no_trace_line(const ExecImage& image) {
  std::string executable =
      image.executable.empty() ? "an image that ended before run could read it" : image.executable;
  std::string why = image.live == Verdict::traced
                        ? "its environment named the tracer, but it left no trace in the run: a "
                          "static image, or one whose tracing could not start (its own message "
                          "above)"
                        : "exec'd where no interposer sees it, it left no trace in the run: "
                          "LD_PRELOAD or MEMTRAIL_OUTPUT out of its environment, as a raw execve "
                          "system call passes them, or an image that cannot be traced";
  return std::to_string(image.pid) + "\tmissing\tran without the tracer: " + executable + " (" +
         why + ")";
}

}  // namespace

std::vector<std::string> untraced_exec_lines(const std::vector<ExecImage>& images,
                                             const std::string& directory) {
  std::set<pid_t> unsure;
  for (const ExecImage& image : images)
    if (!image.program && image.live != Verdict::untraced) unsure.insert(image.namespace_pid);
  const std::multimap<pid_t, std::uint64_t> starts = trace_starts(directory, unsure);
  const std::set<pid_t> listed = pids_listed(directory);
  std::vector<std::string> lines;
  bool paused = false;
  for (const ExecImage& image : images) {
    if (image.program) continue;  // run exec'd it with the tracer: its trace says the rest
    if (image.live == Verdict::untraced) {
      lines.push_back(untraced_line(image.pid, image.executable));
      continue;
    }
    if (listed.count(image.pid) || has_trace_within(starts, image)) continue;
    // Traced into a directory of its own (a run inside the program), as
    // read; no later image of the pid could have been read instead.
    if (image.traces_elsewhere && !image.exec_again) continue;
    if (still_running_with_tracer(image, &paused)) continue;
    lines.push_back(no_trace_line(image));
  }
  return lines;
}

}  // namespace memtrail::cli
