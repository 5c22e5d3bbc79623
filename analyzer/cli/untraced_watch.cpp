// `memtrail run`'s watch for images without the tracer (untraced_watch.hpp).
#include "untraced_watch.hpp"

#include <unistd.h>

#include <chrono>
#include <set>

#include "exec_verdicts.hpp"
#include "image_judge.hpp"
#include "proc_files.hpp"
#include "process_tree.hpp"

namespace memtrail::cli {
namespace {

// The time between two walks of the program's descendants. An image that
// lives shorter may escape (docs/tracing.md says how often, measured); a
// walk of a few processes costs tens of microseconds of run's own time.
constexpr auto kWalkInterval = std::chrono::milliseconds(2);

// How long the listening thread sleeps in the kernel between checks of
// its stop flag; events wake it at once.
constexpr int kListenWaitMs = 50;

// One walk over `root` and its descendants: each image not judged yet is.
// True when it met a process besides `root`.
bool walk_once(pid_t root, std::set<ImageKey>& judged, std::vector<std::string>& found) {
  std::vector<pid_t> pending{root};
  std::set<pid_t> walked;
  while (!pending.empty()) {
    pid_t pid = pending.back();
    pending.pop_back();
    if (!walked.insert(pid).second) continue;
    for (pid_t child : children_of(pid)) pending.push_back(child);
    ImageStat stat;
    if (!read_stat(pid, &stat) || !has_image(stat)) continue;
    if (judged.count(key_of(pid, stat)) || is_memtrail_itself(pid)) continue;  // run's own fork
    Verdict verdict = judge(pid, stat);
    if (verdict == Verdict::not_yet) continue;
    judged.insert(key_of(pid, stat));
    if (verdict == Verdict::untraced) found.push_back(untraced_line(pid, executable_of(pid)));
  }
  return walked.size() > 1;
}

// The run's list line when the kernel dropped events for run: what it
// cannot vouch for.
std::string dropped_events_line(pid_t root) {
  return std::to_string(root) +
         "\tmissing\tof a process of the program, maybe: the kernel dropped process events "
         "(run's socket overflowed while the machine made processes faster than run read "
         "them), so an image exec'd then may have run without the tracer unseen";
}

}  // namespace

UntracedWatch::UntracedWatch(pid_t root, std::optional<ProcessEvents> events,
                             const std::string& directory)
    : root_(root), directory_(directory), events_(std::move(events)) {
  if (events_) tree_.emplace(root, ::getpid(), directory);
  thread_ = events_ ? std::thread([this] { listen(); }) : std::thread([this, root] { walk(root); });
}

UntracedWatch::~UntracedWatch() {
  stopping_.store(true);
  if (thread_.joinable()) thread_.join();
}

std::vector<std::string> UntracedWatch::stop() {
  stopping_.store(true);
  if (thread_.joinable()) thread_.join();
  if (!tree_) return found_;
  std::vector<std::string> lines = untraced_exec_lines(tree_->images(), directory_);
  if (events_->overflows() > 0) lines.push_back(dropped_events_line(root_));
  return lines;
}

void UntracedWatch::walk(pid_t root) {
  std::set<ImageKey> judged;
  while (!stopping_.load()) {
    walked_descendants_ = walk_once(root, judged, found_) || walked_descendants_;
    std::this_thread::sleep_for(kWalkInterval);
  }
}

void UntracedWatch::listen() {
  std::vector<ProcessEvent> batch;
  int overflows_seen = 0;
  // Takes what arrives within `wait_ms`; how many messages that was.
  auto take = [&](int wait_ms) {
    batch.clear();
    int messages = events_->receive(wait_ms, &batch);
    if (events_->overflows() != overflows_seen) {
      overflows_seen = events_->overflows();
      tree_->add_descendants_from_proc();  // the forks it did not hear
    }
    tree_->apply(batch);
    return messages;
  };
  while (!stopping_.load()) take(kListenWaitMs);
  // The kernel sends each event as it happens: all of the program's are
  // queued by the time it has ended.
  while (take(0) > 0) {
  }
}

}  // namespace memtrail::cli
