// Reading a run directory (memtrail/run_index.hpp).
#include "memtrail/run_index.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "memtrail/trace_file.hpp"

namespace memtrail {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool parse_u32(const std::string& text, std::uint32_t* out) {
  if (text.empty() || text.size() > 9) return false;
  std::uint32_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::uint32_t>(c - '0');
  }
  *out = v;
  return true;
}

// <pid>.<seq>.<program>.mtr; other names keep the header's pid and seq 0.
void parse_name(RunProcess& p) {
  std::string stem = p.name.substr(0, p.name.size() - 4);
  auto first = stem.find('.');
  auto second = first == std::string::npos ? first : stem.find('.', first + 1);
  std::uint32_t pid = 0, seq = 0;
  if (second != std::string::npos && parse_u32(stem.substr(0, first), &pid) &&
      parse_u32(stem.substr(first + 1, second - first - 1), &seq)) {
    p.sequence = seq;
    p.program = stem.substr(second + 1);
  } else {
    p.program = stem;
  }
}

std::string base_name(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The exit_status column of index.tsv (when memtrail run wrote one), by
// trace file name.
void read_exit_statuses(const std::string& prefix, std::vector<RunProcess>& processes) {
  std::ifstream in(prefix + kRunIndexFile);
  std::string line;
  if (!std::getline(in, line)) return;  // the header line
  while (std::getline(in, line)) {
    std::vector<std::string> cols;
    std::stringstream fields(line);
    for (std::string col; cols.size() < 7 && std::getline(fields, col, '\t');) cols.push_back(col);
    std::uint32_t status = 0;
    if (cols.size() < 7 || !parse_u32(cols[5], &status)) continue;
    for (RunProcess& p : processes)
      if (p.name == cols[6]) p.exit_status = static_cast<int>(status);
  }
}

}  // namespace

bool is_run_directory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::optional<RunIndex> read_run(const std::string& directory, std::string* error) {
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(directory.c_str()), ::closedir);
  if (!dir) {
    *error = "cannot read run directory " + directory + ": " + std::strerror(errno);
    return std::nullopt;
  }
  RunIndex run;
  run.directory = directory;
  std::string prefix = ends_with(directory, "/") ? directory : directory + "/";
  while (dirent* e = ::readdir(dir.get())) {
    RunProcess p;
    p.name = e->d_name;
    if (!ends_with(p.name, ".mtr") || p.name.size() <= 4) continue;
    p.file = prefix + p.name;
    parse_name(p);
    TraceReader reader(p.file);
    p.header_error = reader.header_error();
    if (p.header_error.empty()) {
      const TraceHeader& h = reader.header();
      p.pid = h.pid;
      p.ppid = h.ppid;
      p.command_line = h.command_line;
      p.executable = h.executable;
      p.start_realtime_ns = h.start_realtime_ns;
    }
    run.processes.push_back(std::move(p));
  }
  if (run.processes.empty()) {
    *error = directory + " holds no memtrail trace (*.mtr): not a run directory";
    return std::nullopt;
  }
  read_exit_statuses(prefix, run.processes);
  std::sort(run.processes.begin(), run.processes.end(),
            [](const RunProcess& a, const RunProcess& b) {
              if (a.start_realtime_ns != b.start_realtime_ns)
                return a.start_realtime_ns < b.start_realtime_ns;
              if (a.pid != b.pid) return a.pid < b.pid;
              return a.sequence < b.sequence;
            });
  return run;
}

std::vector<std::string> read_missing_traces(const std::string& directory) {
  std::vector<std::string> out;
  std::ifstream in(directory + "/" + kRunMissingFile);
  for (std::string line; std::getline(in, line);) {
    auto tab = line.find('\t');
    if (tab == std::string::npos || line.compare(tab, 9, "\tmissing\t") != 0) continue;
    out.push_back("the trace of pid " + line.substr(0, tab) + " (" + line.substr(tab + 9) + ")");
  }
  return out;
}

std::vector<RunProcess> select_processes(const RunIndex& run, std::optional<std::uint32_t> pid,
                                         const std::string& program, std::string* error) {
  std::vector<RunProcess> out;
  for (const RunProcess& p : run.processes) {
    if (pid && p.pid != *pid) continue;
    if (!program.empty() && p.program != program && base_name(p.executable) != program) continue;
    out.push_back(p);
  }
  if (out.empty()) {
    std::string what = pid ? "pid " + std::to_string(*pid) : "";
    if (!program.empty()) what += (what.empty() ? "program '" : " and program '") + program + "'";
    *error = "no process with " + what + " in run " + run.directory;
  }
  return out;
}

std::string run_index_tsv(const RunIndex& run, std::uint32_t root_pid, int root_exit_status) {
  std::string out = "pid\tppid\tseq\tprogram\tstart_ns\texit_status\tfile\tcommand\n";
  for (const RunProcess& p : run.processes) {
    bool root_last = p.pid == root_pid;
    for (const RunProcess& q : run.processes)  // the exit status belongs to the last image
      if (q.pid == root_pid && q.sequence > p.sequence) root_last = false;
    std::string command = p.command_line;
    std::replace(command.begin(), command.end(), '\t', ' ');
    std::replace(command.begin(), command.end(), '\n', ' ');
    out += std::to_string(p.pid) + "\t" + std::to_string(p.ppid) + "\t" +
           std::to_string(p.sequence) + "\t" + p.program + "\t" +
           std::to_string(p.start_realtime_ns) + "\t" +
           (root_last && root_exit_status >= 0 ? std::to_string(root_exit_status) : "-") + "\t" +
           p.name + "\t" + command + "\n";
  }
  return out;
}

bool is_run_entry(const std::string& name) {
  return (ends_with(name, ".mtr") && name.size() > 4) || ends_with(name, ".mtr.symbols") ||
         ends_with(name, ".mtr.tally") || name == kRunIndexFile || name == kRunLockFile ||
         name == kRunMissingFile;
}

bool clear_run_directory(const std::string& directory, bool and_directory, std::string* error) {
  std::vector<std::string> entries;
  {
    std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(directory.c_str()), ::closedir);
    if (!dir) {
      *error = "cannot read " + directory + ": " + std::strerror(errno);
      return false;
    }
    while (dirent* e = ::readdir(dir.get())) {
      std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      if (!is_run_entry(name)) {
        *error = directory + " holds '" + name + "', so it is not a memtrail run directory";
        return false;
      }
      entries.push_back(name);
    }
  }
  for (const std::string& name : entries) {
    if (!and_directory && name == kRunLockFile) continue;  // held by the caller
    if (::unlink((directory + "/" + name).c_str()) != 0 && errno != ENOENT) {
      *error = "cannot remove " + directory + "/" + name + ": " + std::strerror(errno);
      return false;
    }
  }
  if (and_directory && ::rmdir(directory.c_str()) != 0) {
    *error = "cannot remove " + directory + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace memtrail
