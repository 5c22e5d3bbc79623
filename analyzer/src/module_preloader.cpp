// ModulePreloader (module_preloader.hpp).
#include "module_preloader.hpp"

#include <utility>

#include <sys/stat.h>

#include "memtrail/analysis.hpp"
#include "memtrail/event.hpp"

namespace memtrail::detail {

ModulePreloader::ModulePreloader(TraceVisitor& next) : next_(next) {
  worker_ = std::thread([this] { work(); });
}

ModulePreloader::~ModulePreloader() {
  {
    std::lock_guard lock(mu_);
    quit_ = true;
    todo_.clear();
  }
  wake_.notify_all();
  worker_.join();
}

void ModulePreloader::on_module(const ModuleInfo& m) {
  last_hit_ = nullptr;  // the vector may move
  bool replaced = false;
  for (Known& k : modules_)
    if (k.info.id == m.id) {
      k = Known{m, false};
      replaced = true;
    }
  if (!replaced) modules_.push_back(Known{m, false});
  next_.on_module(m);
}

void ModulePreloader::on_stack_node(const StackNode& n) {
  next_.on_stack_node(n);
  if (last_hit_ && n.ip >= last_hit_->info.start && n.ip < last_hit_->info.end) return;
  // The latest loaded module wins where mappings overlap, as in module_of().
  Known* best = nullptr;
  for (Known& k : modules_)
    if (n.ip >= k.info.start && n.ip < k.info.end && (!best || k.info.id > best->info.id))
      best = &k;
  if (!best) return;
  last_hit_ = best;
  if (best->queued) return;
  best->queued = true;
  queue(best->info);
}

void ModulePreloader::queue(const ModuleInfo& info) {
  {
    std::lock_guard lock(mu_);
    todo_.push_back(info);
  }
  wake_.notify_one();
}

std::vector<OpenedModule> ModulePreloader::take() {
  std::unique_lock lock(mu_);
  idle_.wait(lock, [&] { return todo_.empty() && !busy_; });
  return std::exchange(done_, {});
}

void ModulePreloader::work() {
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return quit_ || !todo_.empty(); });
    if (quit_) return;
    ModuleInfo info = std::move(todo_.front());
    todo_.pop_front();
    busy_ = true;
    lock.unlock();
    OpenedModule opened = open_module(info, true);
    lock.lock();
    busy_ = false;
    done_.push_back(std::move(opened));
    if (todo_.empty()) idle_.notify_all();
  }
}

}  // namespace memtrail::detail

namespace memtrail::detail {

bool worth_preloading(const std::string& trace_path, const AnalysisOptions& options) {
  if (!options.symbolize) return false;
  if (!options.symbol_cache) return true;
  struct stat st;
  return ::stat((trace_path + ".symbols").c_str(), &st) != 0;
}

}  // namespace memtrail::detail
