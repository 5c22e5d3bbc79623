// memtrail run's settling of event tallies (run_tally.hpp).
#include "run_tally.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>

#include "memtrail/event_tally.hpp"
#include "memtrail/size.hpp"
#include "memtrail/trace_file.hpp"
#include "proc_files.hpp"

namespace memtrail::cli {
namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// What a cut trace holds: enough to append to it.
struct TraceEnd : TraceVisitor {
  std::uint32_t time_resolution_ns = 1;
  std::uint32_t max_string_id = 0;
  std::uint64_t last_time_ns = 0;
  void on_header(const TraceHeader& h) override { time_resolution_ns = h.time_resolution_ns; }
  void on_string(std::uint32_t id, std::string_view) override {
    max_string_id = std::max(max_string_id, id);
  }
  void on_event(const Event& e) override { last_time_ns = std::max(last_time_ns, e.time_ns); }
};

std::string how_it_ended(bool root, int wait_status) {
  if (root && WIFSIGNALED(wait_status)) {
    const char* abbrev = sigabbrev_np(WTERMSIG(wait_status));
    return std::string("the process was killed by ") +
           (abbrev ? std::string("SIG") + abbrev
                   : "signal " + std::to_string(WTERMSIG(wait_status))) +
           " before its tracer wrote them";
  }
  if (root)
    return "the process ended without running its exit handlers (a raw exit_group system "
           "call?) or writing its trace failed, before its tracer wrote them";
  return "the process ended without finishing its trace (a raw exit_group system call, "
         "SIGKILL, or a failed write) before its tracer wrote them";
}

// Cuts the trace back to its whole chunks and ends it with a lost mark of
// `lost` events (none when 0) and the end marker. False + `error` when the
// file cannot be read back to a clean cut or written.
bool end_with_loss(const std::string& path, std::uint64_t lost, const std::string& words,
                   std::string* error) {
  TraceEnd end;
  TraceReader reader(path);
  if (!reader.header_error().empty()) {
    *error = reader.header_error();
    return false;
  }
  ReadResult r = reader.read(end);
  if (!r.ok || r.complete) {
    *error = r.ok ? "it is whole" : r.error;
    return false;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || static_cast<std::uint64_t>(st.st_size) < r.dropped_bytes) {
    *error = "cannot read its size";
    return false;
  }
  try {
    TraceWriter::Resume at;
    at.keep_bytes = static_cast<std::uint64_t>(st.st_size) - r.dropped_bytes;
    at.events = r.events;
    at.time_resolution_ns = end.time_resolution_ns;
    TraceWriter writer(path, at);
    if (lost > 0) {
      std::uint32_t words_id = end.max_string_id + 1;
      writer.add_string(words_id, words);
      Event mark;
      mark.kind = EventKind::mark;
      mark.detail = static_cast<std::uint8_t>(MarkDetail::lost);
      mark.time_ns = end.last_time_ns;
      mark.size = lost;
      mark.requested = static_cast<std::uint8_t>(LostReason::process_ended);
      mark.aux = words_id;
      writer.add_event(mark);
    }
    writer.finish();
  } catch (const std::exception& e) {
    *error = e.what();
    return false;
  }
  return true;
}

std::string settle(const std::string& directory, const std::string& name, pid_t root_pid,
                   int wait_status) {
  const std::string tally_path = directory + "/" + name;
  const std::string trace_name = name.substr(0, name.size() - std::string(kTallySuffix).size());
  const std::string trace_path = directory + "/" + trace_name;
  TallyCounts counts = read_event_tally(tally_path);
  if (counts.ok && process_alive(static_cast<pid_t>(counts.pid)))
    return "";  // still tracing: not ours to end
  ::unlink(tally_path.c_str());
  if (!counts.ok) return "";
  const bool root = counts.pid == static_cast<std::uint32_t>(root_pid);
  const std::uint64_t lost = counts.made > counts.written ? counts.made - counts.written : 0;
  const std::string at_least = counts.exact ? "" : "at least ";
  const std::string why = how_it_ended(root, wait_status);
  std::string words = "made by the process but not written: " + why +
                      " (counted by memtrail run from the trace's event tally" +
                      (counts.exact ? "" : "; threads beyond its slots uncounted") + ")";
  std::string error;
  if (!end_with_loss(trace_path, lost, words, &error)) {
    if (error == "it is whole") return "";
    if (lost == 0) return "";
    return "pid " + std::to_string(counts.pid) + ": " + at_least + count_text(lost, "event") +
           " not written to " + trace_name + ": " + why +
           " (the trace could not be ended: " + error + ")";
  }
  if (lost == 0) return "";
  return "pid " + std::to_string(counts.pid) + ": " + at_least + count_text(lost, "event") +
         " not written to " + trace_name + ": " + why;
}

}  // namespace

std::vector<std::string> settle_event_tallies(const std::string& directory, pid_t root_pid,
                                              int wait_status) {
  std::vector<std::string> names, lost;
  {
    std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(directory.c_str()), ::closedir);
    if (!dir) return lost;
    while (dirent* e = ::readdir(dir.get()))
      if (ends_with(e->d_name, std::string(".mtr") + kTallySuffix)) names.push_back(e->d_name);
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names)
    if (std::string line = settle(directory, name, root_pid, wait_status); !line.empty())
      lost.push_back(line);
  return lost;
}

}  // namespace memtrail::cli
