// Which exec'd images ran without the tracer (exec_verdicts.hpp).
#include "exec_verdicts.hpp"

#include <dirent.h>

#include <cstdlib>
#include <fstream>
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

// Judged again now: the pid's latest image, still running at the run's end
// (an orphan): it read "traced" if its trace may simply be elsewhere.
Verdict verdict_now(const ExecImage& image) {
  ImageStat stat;
  if (image.end_ns != std::numeric_limits<std::uint64_t>::max() || !read_stat(image.pid, &stat) ||
      !has_image(stat))
    return Verdict::not_yet;
  return judge(image.pid, stat);
}

std::string unseen_line(const ExecImage& image) {
  std::string executable =
      image.executable.empty() ? "an image that ended before run could read it" : image.executable;
  return std::to_string(image.pid) + "\tmissing\tran without the tracer: " + executable +
         " (exec'd where no interposer sees it, it left no trace in the run: LD_PRELOAD or "
         "MEMTRAIL_OUTPUT out of its environment, as a raw execve system call passes them, or "
         "an image that cannot be traced)";
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
  for (const ExecImage& image : images) {
    if (image.program) continue;  // run exec'd it with the tracer: its trace says the rest
    if (image.live == Verdict::untraced) {
      lines.push_back(untraced_line(image.pid, image.executable));
      continue;
    }
    if (listed.count(image.pid) || has_trace_within(starts, image)) continue;
    // Read traced, and no later image of the pid could have been read
    // instead: traced, its trace elsewhere (a run of its own inside).
    if (image.live == Verdict::traced && !image.exec_again) continue;
    Verdict now = verdict_now(image);
    if (now == Verdict::traced) continue;
    lines.push_back(now == Verdict::untraced ? untraced_line(image.pid, executable_of(image.pid))
                                             : unseen_line(image));
  }
  return lines;
}

}  // namespace memtrail::cli
