// Opens, on a thread of its own, the modules that a trace's stacks point
// into, while the trace is still being read: a cold report spends tens of
// milliseconds per module with debug info in libdw (libc6-dbg's compressed
// sections alone are ~50 ms of inflating), which otherwise comes after the
// event pass instead of beside it.
//
// It sits between the reader and the visitor (the Engine), forwards every
// callback unchanged, and watches module records and stack nodes: the first
// node whose ip falls in a module queues that module. take() waits for the
// queue to drain and hands the opened modules to the Symbolizer
// (Symbolizer::adopt_preopened), which then opens them no more. Only libdw
// work runs on the thread, and the Symbolizer starts only after take(): no
// two threads use libdw objects at once.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "memtrail/trace_file.hpp"
#include "module_open.hpp"

namespace memtrail::detail {

class ModulePreloader final : public TraceVisitor {
 public:
  explicit ModulePreloader(TraceVisitor& next);
  ~ModulePreloader() override;
  ModulePreloader(const ModulePreloader&) = delete;
  ModulePreloader& operator=(const ModulePreloader&) = delete;

  // Waits for the modules queued so far and returns them, opened.
  std::vector<OpenedModule> take();

  void on_header(const TraceHeader& h) override { next_.on_header(h); }
  void on_string(std::uint32_t id, std::string_view text) override { next_.on_string(id, text); }
  void on_module(const ModuleInfo& m) override;
  void on_thread(const ThreadInfo& t) override { next_.on_thread(t); }
  void on_pool(const PoolInfo& p) override { next_.on_pool(p); }
  void on_stack_node(const StackNode& n) override;
  void on_scope(const ScopeInfo& s) override { next_.on_scope(s); }
  void on_event(const Event& e) override { next_.on_event(e); }
  bool keep_going() override { return next_.keep_going(); }
  void on_chunk(std::uint64_t offset) override { next_.on_chunk(offset); }
  std::span<Event> event_buffer() override { return next_.event_buffer(); }
  void events_stored(std::size_t n) override { next_.events_stored(n); }
  void on_events(const Event* events, std::size_t n) override { next_.on_events(events, n); }

 private:
  struct Known {
    ModuleInfo info;
    bool queued = false;
  };
  void queue(const ModuleInfo& info);
  void work();

  TraceVisitor& next_;
  std::vector<Known> modules_;       // the latest record of each id
  const Known* last_hit_ = nullptr;  // most nodes fall in the module of the one before

  std::mutex mu_;
  std::condition_variable wake_, idle_;
  std::deque<ModuleInfo> todo_;
  std::vector<OpenedModule> done_;
  bool busy_ = false, quit_ = false;
  std::thread worker_;
};

}  // namespace memtrail::detail

namespace memtrail {
struct AnalysisOptions;
}

namespace memtrail::detail {

// Whether analyze() should preload: symbols are asked for, and no symbol
// cache (TRACE.symbols) will answer them instead of the files.
bool worth_preloading(const std::string& trace_path, const AnalysisOptions& options);

}  // namespace memtrail::detail
