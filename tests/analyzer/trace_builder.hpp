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
    Event e = event(t, kind, pool, thread);
    e.address = addr;
    e.size = size;
    e.requested = size;
    e.stack = stack;
    w_.add_event(e);
  }
  void reuse(std::uint64_t t, std::uint32_t pool, std::uint64_t addr, std::uint64_t size,
             std::uint32_t stack = 0) {
    alloc(t, pool, addr, size, stack, 1, EventKind::reuse);
  }
  void free(std::uint64_t t, std::uint32_t pool, std::uint64_t addr, std::uint32_t thread = 1) {
    Event e = event(t, EventKind::free, pool, thread);
    e.address = addr;
    w_.add_event(e);
  }
  void segment(std::uint64_t t, EventKind kind, std::uint32_t pool, std::uint64_t addr,
               std::uint64_t size, SegmentDetail detail = SegmentDetail::whole) {
    Event e = event(t, kind, pool, 1);
    e.address = addr;
    e.size = size;
    e.detail = static_cast<std::uint8_t>(detail);
    w_.add_event(e);
  }
  void reachability(std::uint64_t t, std::uint32_t pool, std::uint64_t addr, std::uint64_t size,
                    LeakClass c) {
    Event e = event(t, EventKind::reachability, pool, 1);
    e.address = addr;
    e.size = size;
    e.detail = static_cast<std::uint8_t>(c);
    w_.add_event(e);
  }
  void scope(std::uint64_t t, EventKind kind, std::uint32_t scope, std::uint32_t thread = 1) {
    Event e = event(t, kind, 0, thread);
    e.aux = scope;
    w_.add_event(e);
  }
  void mark(std::uint64_t t, std::uint32_t string_id, const std::string& text) {
    w_.add_string(string_id, text);
    Event e = event(t, EventKind::mark, 0, 1);
    e.aux = string_id;
    w_.add_event(e);
  }
  void sample(std::uint64_t t, std::uint64_t rss, std::uint64_t heap_used,
              std::uint64_t heap_reserved) {
    Event e = event(t, EventKind::sample, 0, 1);
    e.address = rss;
    e.size = heap_used;
    e.requested = heap_reserved;
    w_.add_event(e);
  }

 private:
  static Event event(std::uint64_t t, EventKind kind, std::uint32_t pool, std::uint32_t thread) {
    Event e;
    e.time_ns = t;
    e.kind = kind;
    e.pool = pool;
    e.thread = thread;
    return e;
  }
  static TraceHeader header() {
    TraceHeader h;
    h.pid = 1234;
    h.command_line = "synthetic";
    return h;
  }
  std::string path_;
  TraceWriter w_;
};

// The heap events several tests assert on (pool 1, thread 1; the caller
// defines the pool and stacks 1..3):
//   t10 alloc A 100 (stack 1)   used 100
//   t20 alloc B 200 (stack 2)   used 300  <- peak, first reached here
//   t30 free A                  used 200
//   t40 alloc C 50  (stack 1)   used 250
//   t50 free C                  used 200  C is temporary (no alloc in between)
//   t60 free B                  used 0    B is not (C was allocated after it)
//   t70 alloc D 300 (stack 3)   used 300  equals the peak, does not move it; leaked
inline void write_heap_events(TraceBuilder& b) {
  b.alloc(10, 1, 0xA0, 100, 1);
  b.alloc(20, 1, 0xB0, 200, 2);
  b.free(30, 1, 0xA0);
  b.alloc(40, 1, 0xC0, 50, 1);
  b.free(50, 1, 0xC0);
  b.free(60, 1, 0xB0);
  b.alloc(70, 1, 0xD0, 300, 3);
}

}  // namespace memtrail::test
