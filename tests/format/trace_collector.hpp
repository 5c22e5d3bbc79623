// Test helper: a TraceVisitor that keeps everything it is given, in order.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "memtrail/trace_file.hpp"

namespace memtrail::test {

struct Collected : TraceVisitor {
  TraceHeader header;
  std::vector<std::pair<std::uint32_t, std::string>> strings;
  std::vector<ModuleInfo> modules;
  std::vector<ThreadInfo> threads;
  std::vector<PoolInfo> pools;
  std::vector<StackNode> stack_nodes;
  std::vector<ScopeInfo> scopes;
  std::vector<Event> events;
  std::vector<std::string> order;  // "string", "event", ... in arrival order

  void on_header(const TraceHeader& h) override { header = h; }
  void on_string(std::uint32_t id, std::string_view text) override {
    strings.emplace_back(id, std::string(text));
    order.push_back("string");
  }
  void on_module(const ModuleInfo& m) override {
    modules.push_back(m);
    order.push_back("module");
  }
  void on_thread(const ThreadInfo& t) override {
    threads.push_back(t);
    order.push_back("thread");
  }
  void on_pool(const PoolInfo& p) override {
    pools.push_back(p);
    order.push_back("pool");
  }
  void on_stack_node(const StackNode& n) override {
    stack_nodes.push_back(n);
    order.push_back("stack_node");
  }
  void on_scope(const ScopeInfo& s) override {
    scopes.push_back(s);
    order.push_back("scope");
  }
  void on_event(const Event& e) override {
    events.push_back(e);
    order.push_back("event");
  }
};

inline ReadResult read_trace(const std::string& path, Collected& out) {
  TraceReader reader(path);
  return reader.read(out);
}

inline std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/memtrail-test-" + std::to_string(::getpid()) + "-" +
         name;
}

// A temporary file's path (temp_path), removed when the test is done.
struct TempFile {
  explicit TempFile(const std::string& name) : path(temp_path(name)) {}
  ~TempFile() { std::remove(path.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string path;
};

}  // namespace memtrail::test
