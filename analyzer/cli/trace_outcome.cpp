// memtrail run's final line (trace_outcome.hpp).
#include "trace_outcome.hpp"

#include "memtrail/size.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "memtrail/trace_file.hpp"

namespace memtrail::cli {
namespace {

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

std::string directory_of(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Why a program that ended this way may have left an unfinished trace.
std::string how_it_ended(int status) {
  if (WIFSIGNALED(status))
    return "the program was killed by " + signal_name(WTERMSIG(status)) +
           (WTERMSIG(status) == SIGKILL ? ", which cannot be caught"
                                        : " before the trace was finished");
  // A failed write says why on the program's stderr as it happens; a raw
  // exit_group (or a writer thread that died with the process) says nothing.
  return "the program ended without running its exit handlers (a raw exit_group system "
         "call?), so the events after the last whole chunk are lost, or writing the trace "
         "failed (the tracer then said why on stderr)";
}

}  // namespace

TraceFileState inspect_trace_file(const std::string& path, std::string* detail) {
  std::string why;
  struct stat st;
  TraceFileState state;
  if (stat(path.c_str(), &st) != 0) {
    std::string dir = directory_of(path);
    if (access(dir.c_str(), W_OK | X_OK) != 0) why = std::strerror(errno);
    state = TraceFileState::missing;
  } else if (S_ISDIR(st.st_mode)) {
    state = TraceFileState::directory;
  } else if (!S_ISREG(st.st_mode)) {
    state = TraceFileState::not_regular;
  } else if (st.st_size == 0) {
    why = "the file is empty";
    state = TraceFileState::unusable;
  } else if (TraceReader reader(path); !reader.header_error().empty()) {
    why = reader.header_error();
    state = TraceFileState::unusable;
  } else {
    state = reader.ends_with_end_marker() ? TraceFileState::complete : TraceFileState::incomplete;
  }
  if (detail) *detail = why;
  return state;
}

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

std::string run_outcome_message(const RunIndex& run, const std::string& shown_name,
                                std::uint32_t root_pid, int wait_status,
                                const std::vector<std::string>& missing,
                                const std::vector<std::string>& lost) {
  std::vector<std::string> incomplete, unusable;
  bool programs_unfinished = false;
  for (const RunProcess& p : run.processes) {
    std::string why;
    TraceFileState state = inspect_trace_file(p.file, &why);
    if (state == TraceFileState::complete) continue;
    programs_unfinished |= p.pid == root_pid;
    if (state == TraceFileState::incomplete)
      incomplete.push_back(p.name);
    else
      unusable.push_back(p.name + (why.empty() ? "" : " (" + why + ")"));
  }
  const std::size_t n = run.processes.size();
  const std::string count = count_text(n, "trace");
  if (incomplete.empty() && unusable.empty() && missing.empty() && lost.empty())
    return "memtrail: trace written to " + shown_name + " (" + count + ")";
  std::string line = unusable.size() == n
                         ? "memtrail: no usable trace in " + shown_name + ": " + joined(unusable)
                         : "memtrail: " + shown_name + " (" + count + ") is not whole";
  if (unusable.size() != n) {
    if (!incomplete.empty())
      line += ": no end-of-trace marker (they read up to their last whole chunk) in " +
              joined(incomplete);
    if (!unusable.empty()) line += "; unusable: " + joined(unusable);
  }
  bool first_problem = incomplete.empty() && unusable.empty();
  for (const auto* list : {&missing, &lost}) {
    if (list->empty()) continue;
    line += (first_problem ? ": " : "; ") +
            std::string(list == &missing ? "missing: " : "events lost: ") + joined(*list);
    first_problem = false;
  }
  if (programs_unfinished) line += "; " + how_it_ended(wait_status);
  return line;
}

}  // namespace memtrail::cli
