// Synthesizes exact traces for the analyzer tests: a TraceWriter plus terse
// helpers for the common events, so each test lists its event sequence.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <string>

#include "memtrail/trace_file.hpp"

namespace memtrail::test {

inline std::string temp_trace(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/memtrail-analyzer-" +
         std::to_string(getpid()) + "-" + name;
}

inline std::string slurp_file(const std::string& path) {
  std::string out;
  if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
    std::fclose(f);
  }
  return out;
}

class TraceBuilder {
 public:
  // Threads 1 and 2 exist in every trace (the reader insists events refer
  // to known table ids).
  explicit TraceBuilder(std::string path) : path_(std::move(path)), w_(path_, header()) {
    w_.add_thread(ThreadInfo{1, 1001, "main"});
    w_.add_thread(ThreadInfo{2, 1002, "worker"});
  }
  ~TraceBuilder() {
    std::remove(path_.c_str());
    std::remove((path_ + ".symbols").c_str());
  }

  const std::string& path() const { return path_; }
  TraceWriter& writer() { return w_; }
  // Writes the end marker; the file is then complete and readable.
  const std::string& finish() {
    w_.finish();
    return path_;
  }

  std::uint32_t pool(std::uint32_t id, std::string name, PoolKind kind, std::uint32_t parent = 0,
                     MemorySpace space = MemorySpace::host, int device = -1) {
    w_.add_pool(PoolInfo{id, parent, std::move(name), kind, space, device});
    return id;
  }
  void stack(std::uint32_t id, std::uint32_t parent, std::uint64_t ip) {
    w_.add_stack_node(StackNode{id, parent, ip});
  }
  void alloc(std::uint64_t t, std::uint32_t pool, std::uint64_t addr, std::uint64_t size,
             std::uint32_t stack = 0, std::uint32_t thread = 1, EventKind kind = EventKind::alloc) {
    Event e;
    e.time_ns = t;
    e.kind = kind;
    e.pool = pool;
    e.address = addr;
    e.size = size;
    e.requested = size;
    e.stack = stack;
    e.thread = thread;
    w_.add_event(e);
  }
  void reuse(std::uint64_t t, std::uint32_t pool, std::uint64_t addr, std::uint64_t size,
             std::uint32_t stack = 0) {
    alloc(t, pool, addr, size, stack, 1, EventKind::reuse);
  }
  void free(std::uint64_t t, std::uint32_t pool, std::uint64_t addr, std::uint32_t thread = 1) {
    Event e;
    e.time_ns = t;
    e.kind = EventKind::free;
    e.pool = pool;
    e.address = addr;
    e.thread = thread;
    w_.add_event(e);
  }
  void segment(std::uint64_t t, EventKind kind, std::uint32_t pool, std::uint64_t addr,
               std::uint64_t size, SegmentDetail detail = SegmentDetail::whole) {
    Event e;
    e.time_ns = t;
    e.kind = kind;
    e.pool = pool;
    e.address = addr;
    e.size = size;
    e.detail = static_cast<std::uint8_t>(detail);
    e.thread = 1;
    w_.add_event(e);
  }
  void reachability(std::uint64_t t, std::uint32_t pool, std::uint64_t addr, std::uint64_t size,
                    LeakClass c) {
    Event e;
    e.time_ns = t;
    e.kind = EventKind::reachability;
    e.pool = pool;
    e.address = addr;
    e.size = size;
    e.detail = static_cast<std::uint8_t>(c);
    e.thread = 1;
    w_.add_event(e);
  }
  void scope(std::uint64_t t, EventKind kind, std::uint32_t scope, std::uint32_t thread = 1) {
    Event e;
    e.time_ns = t;
    e.kind = kind;
    e.aux = scope;
    e.thread = thread;
    w_.add_event(e);
  }
  void mark(std::uint64_t t, std::uint32_t string_id, const std::string& text) {
    w_.add_string(string_id, text);
    Event e;
    e.time_ns = t;
    e.kind = EventKind::mark;
    e.aux = string_id;
    e.thread = 1;
    w_.add_event(e);
  }
  void sample(std::uint64_t t, std::uint64_t rss, std::uint64_t heap_used,
              std::uint64_t heap_reserved) {
    Event e;
    e.time_ns = t;
    e.kind = EventKind::sample;
    e.address = rss;
    e.size = heap_used;
    e.requested = heap_reserved;
    e.thread = 1;
    w_.add_event(e);
  }

 private:
  static TraceHeader header() {
    TraceHeader h;
    h.pid = 1234;
    h.command_line = "synthetic";
    return h;
  }
  std::string path_;
  TraceWriter w_;
};

}  // namespace memtrail::test
