// memtrail run's output directory (run_output.hpp).
#include "run_output.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <vector>

#include "memtrail/run_index.hpp"
#include "run_tally.hpp"
#include "trace_outcome.hpp"

namespace memtrail::cli {
namespace {

int fail(const std::string& message) {
  std::fprintf(stderr, "memtrail run: %s\n", message.c_str());
  return -1;
}

// A single .mtr file of an older memtrail stands where the run goes: the
// run replaces it, as a run replaced its own earlier file before.
bool is_trace_file(const std::string& path) {
  static constexpr unsigned char kMagic[8] = {0x89, 'M', 'T', 'R', 'A', 'C', 'E', '\n'};
  unsigned char head[8] = {};
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool same = ::read(fd, head, sizeof head) == sizeof head && std::memcmp(head, kMagic, 8) == 0;
  ::close(fd);
  return same;
}

// The run's list of problems (kRunMissingFile: "PID\tKIND\tTEXT" lines),
// removed when empty.
struct RunProblems {
  std::vector<std::string> missing;  // "the trace of pid PID (WHY)"
  std::vector<std::string> lost;     // "pid PID: N events not written to ...: why"
};

// An exec the tracer announced ("PID\texec\tSEQ PATH"): the image it starts
// should write <pid>.<seq or later>.<program>.mtr.
struct AnnouncedExec {
  std::string pid, path;
  long sequence = 0;
};

// The highest trace sequence number of each pid in the run directory, read
// once (a run of thousands of spawned children announces thousands).
std::map<std::string, long> last_trace_sequences(const std::string& directory) {
  std::map<std::string, long> last;
  DIR* d = ::opendir(directory.c_str());
  if (!d) return last;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    auto dot = name.find('.');
    if (dot == std::string::npos || dot == 0 || name.size() < 4 ||
        name.compare(name.size() - 4, 4, ".mtr") != 0)
      continue;
    char* end = nullptr;
    long seq = std::strtol(name.c_str() + dot + 1, &end, 10);
    if (end == name.c_str() + dot + 1 || *end != '.') continue;
    auto [it, fresh] = last.emplace(name.substr(0, dot), seq);
    if (!fresh) it->second = std::max(it->second, seq);
  }
  ::closedir(d);
  return last;
}

// The announced execs whose image left no trace (numbered SEQ or later) and
// no line of its own, as "PID\tmissing\tWHY" lines.
std::vector<std::string> missing_after_exec(const std::string& directory,
                                            const std::vector<AnnouncedExec>& execs,
                                            const std::set<std::string>& said_missing) {
  std::vector<std::string> lines;
  if (execs.empty()) return lines;
  const std::map<std::string, long> last = last_trace_sequences(directory);
  for (const AnnouncedExec& e : execs) {
    auto trace = last.find(e.pid);
    if (said_missing.count(e.pid) || (trace != last.end() && trace->second >= e.sequence)) continue;
    lines.push_back(e.pid + "\tmissing\tafter exec of " + e.path +
                    ": the new image did not create it (it could not reach the run directory "
                    "after setuid or chroot, was not traced: static, set-user-ID, or its "
                    "tracing could not start: see its own message above)");
  }
  return lines;
}

// A vfork child whose exec returned takes back its announcement: the
// latest one of that pid and sequence (the exec that succeeded after it,
// the next candidate of a PATH search, stays announced).
void withdraw_last_announcement(std::vector<AnnouncedExec>& execs, const std::string& pid,
                                long sequence) {
  for (auto e = execs.rbegin(); e != execs.rend(); ++e)
    if (e->pid == pid && e->sequence == sequence) {
      execs.erase(std::next(e).base());
      return;
    }
}

// Reads the list, turns the announced execs into missing lines where their
// trace never appeared, and leaves the list as report and check read it
// (read_missing_traces): its missing and lost lines, removed when none.
RunProblems run_problems(const std::string& directory) {
  std::string path = directory + "/" + kRunMissingFile;
  std::vector<std::string> kept;  // the missing and lost lines
  std::vector<AnnouncedExec> execs;
  std::set<std::string> said_missing;  // pids with a "missing" line
  bool withdrawals = false;            // any "exec-failed" line
  {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
      auto tab = line.find('\t');
      auto tab2 = tab == std::string::npos ? tab : line.find('\t', tab + 1);
      if (tab2 == std::string::npos) continue;
      std::string pid = line.substr(0, tab), kind = line.substr(tab + 1, tab2 - tab - 1);
      std::string text = line.substr(tab2 + 1);
      if (kind == "exec-failed") {  // a vfork child's exec returned: no image came
        withdraw_last_announcement(execs, pid, std::strtol(text.c_str(), nullptr, 10));
        withdrawals = true;
        continue;
      }
      if (kind != "exec") {
        if (kind == "missing") said_missing.insert(pid);
        kept.push_back(line);
        continue;
      }
      AnnouncedExec e{pid, "", 0};
      char* end = nullptr;
      e.sequence = std::strtol(text.c_str(), &end, 10);
      e.path = end && *end == ' ' ? std::string(end + 1) : text;
      execs.push_back(e);
    }
  }
  for (std::string& line : missing_after_exec(directory, execs, said_missing))
    kept.push_back(std::move(line));
  RunProblems problems;
  for (const std::string& line : kept) {
    auto tab = line.find('\t'), tab2 = line.find('\t', tab + 1);
    std::string pid = line.substr(0, tab), kind = line.substr(tab + 1, tab2 - tab - 1);
    std::string text = line.substr(tab2 + 1);
    if (kind == "missing")
      problems.missing.push_back("the trace of pid " + pid + " (" + text + ")");
    else
      problems.lost.push_back("pid " + pid + ": " + text);
  }
  if (kept.empty()) {
    ::unlink(path.c_str());
  } else if (!execs.empty() || withdrawals) {
    std::ofstream out(path, std::ios::trunc);
    for (const std::string& line : kept) out << line << "\n";
  }
  return problems;
}

}  // namespace

int prepare_run_directory(const std::string& directory) {
  struct stat st;
  if (::lstat(directory.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
    if (!S_ISREG(st.st_mode) || !is_trace_file(directory))
      return fail(directory + " exists and is not a run directory; choose another -o");
    if (::unlink(directory.c_str()) != 0 && errno != ENOENT)
      return fail("cannot replace the old trace " + directory + ": " + std::strerror(errno));
  }
  if (::mkdir(directory.c_str(), 0755) != 0 && errno != EEXIST)
    return fail("cannot create run directory " + directory + ": " + std::strerror(errno));
  std::string lock_path = directory + "/" + kRunLockFile;
  int lock = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock < 0) return fail("cannot create " + lock_path + ": " + std::strerror(errno));
  if (::flock(lock, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock);
    return fail(directory + " is in use by another memtrail run; choose another -o");
  }
  std::string error;
  if (!clear_run_directory(directory, false, &error)) {  // a stale run's files
    ::close(lock);
    return fail(error + "; choose another -o");
  }
  // Open before the program starts (its privileges may drop): each image's
  // tracer appends the traces it could not create (kRunMissingFile).
  int missing = ::open((directory + "/" + kRunMissingFile).c_str(),
                       O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (missing >= 0) ::close(missing);
  return lock;
}

bool finish_run_directory(const std::string& directory, const std::string& shown_name,
                          pid_t root_pid, int wait_status, bool quiet) {
  std::string error;
  // Before the traces are read: a trace its process left unfinished gets
  // its counted loss and its end here.
  std::vector<std::string> lost_at_end = settle_event_tallies(directory, root_pid, wait_status);
  RunProblems problems = run_problems(directory);
  problems.lost.insert(problems.lost.end(), lost_at_end.begin(), lost_at_end.end());
  const std::vector<std::string>& missing = problems.missing;
  auto run = read_run(directory, &error);
  if (!run) {
    std::string why = "the program did not start tracing";
    for (const std::string& m : missing) why += "; missing: " + m;
    std::fprintf(stderr, "memtrail: no trace was written to %s (%s)\n", shown_name.c_str(),
                 why.c_str());
    if (missing.empty()) clear_run_directory(directory, true, &error);
    return missing.empty();
  }
  int exit_status = WIFEXITED(wait_status)     ? WEXITSTATUS(wait_status)
                    : WIFSIGNALED(wait_status) ? 128 + WTERMSIG(wait_status)
                                               : -1;
  std::ofstream(directory + "/" + kRunIndexFile, std::ios::trunc)
      << run_index_tsv(*run, static_cast<std::uint32_t>(root_pid), exit_status);
  std::string line = run_outcome_message(*run, shown_name, static_cast<std::uint32_t>(root_pid),
                                         wait_status, missing, problems.lost);
  // Quiet leaves out only the good news.
  if (!quiet || line.rfind("memtrail: trace written to ", 0) != 0)
    std::fprintf(stderr, "%s\n", line.c_str());
  return missing.empty();
}

void add_to_run_list(const std::string& directory, const std::vector<std::string>& lines) {
  if (lines.empty()) return;
  std::ofstream list(directory + "/" + kRunMissingFile, std::ios::app);
  for (const std::string& line : lines) list << line << "\n";
}

}  // namespace memtrail::cli
