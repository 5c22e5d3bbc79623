// The program's process tree from process events (process_tree.hpp).
#include "process_tree.hpp"

#include <cstdlib>
#include <cstring>
#include <optional>

#include "proc_files.hpp"

namespace memtrail::cli {
namespace {

// The innermost pid of /proc/PID/status's NSpid line: what the process and
// its trace's name call it inside a PID namespace of its own; `pid` when
// unreadable.
pid_t namespace_pid_of(pid_t pid) {
  std::optional<std::string> status = read_proc_file(proc_path(pid, "status"));
  auto line = status ? status->find("\nNSpid:") : std::string::npos;
  if (line == std::string::npos) return pid;
  auto end = status->find('\n', line + 1);
  auto last = status->find_last_of(" \t", end);
  return last != std::string::npos && last > line ? std::atoi(status->c_str() + last + 1) : pid;
}

// Whether `events` holds, after `index`, another event that makes a new
// image of `pid` (its /proc may show that one already).
bool replaced_later(const std::vector<ProcessEvent>& events, std::size_t index, pid_t pid) {
  for (std::size_t i = index + 1; i < events.size(); ++i)
    if (events[i].pid == pid && !events[i].thread) return true;
  return false;
}

}  // namespace

ProcessTree::ProcessTree(pid_t root, pid_t self, std::string directory)
    : root_(root), self_(self), directory_(std::move(directory)) {
  members_.insert(root);
}

void ProcessTree::apply(const std::vector<ProcessEvent>& events) {
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i].kind == ProcessEvent::Kind::fork)
      on_fork(events[i]);
    else
      on_exec(events, i);
  }
}

void ProcessTree::end_image_of(pid_t pid, std::uint64_t time_ns, bool exec_again) {
  auto latest = latest_image_.find(pid);
  if (latest == latest_image_.end()) return;
  images_[latest->second].end_ns = time_ns;
  images_[latest->second].exec_again = exec_again;
  latest_image_.erase(latest);
}

void ProcessTree::on_fork(const ProcessEvent& event) {
  if (event.thread) return;  // a thread: its process is already known (or not ours)
  // A new process of this pid: the old one's last image ended before.
  end_image_of(event.pid, event.time_ns, false);
  // A child of run itself is the program's too (CLONE_PARENT makes the
  // root's sibling); the root's own fork is one.
  if (members_.count(event.parent) || event.parent == self_)
    members_.insert(event.pid);
  else
    members_.erase(event.pid);  // the pid reused by a process not the program's
}

void ProcessTree::on_exec(const std::vector<ProcessEvent>& events, std::size_t index) {
  const ProcessEvent& event = events[index];
  if (!members_.count(event.pid)) return;  // most events: other programs'
  end_image_of(event.pid, event.time_ns, true);
  ExecImage image;
  image.pid = image.namespace_pid = event.pid;
  image.exec_ns = event.time_ns;
  image.program = event.pid == root_ && !program_exec_seen_;
  program_exec_seen_ = program_exec_seen_ || image.program;
  ImageStat stat;
  if (!image.program && !replaced_later(events, index, event.pid) && read_stat(event.pid, &stat) &&
      has_image(stat)) {
    image.executable = executable_of(event.pid);
    image.namespace_pid = namespace_pid_of(event.pid);
    image.live = is_memtrail_itself(event.pid) ? Verdict::traced : judge(event.pid, stat);
    image.traces_elsewhere =
        image.live == Verdict::traced && traces_elsewhere(event.pid, directory_);
  }
  latest_image_[event.pid] = images_.size();
  images_.push_back(std::move(image));
}

void ProcessTree::add_descendants_from_proc() {
  std::vector<pid_t> pending(members_.begin(), members_.end());
  while (!pending.empty()) {
    pid_t pid = pending.back();
    pending.pop_back();
    for (pid_t child : children_of(pid))
      if (members_.insert(child).second) pending.push_back(child);
  }
}

}  // namespace memtrail::cli
