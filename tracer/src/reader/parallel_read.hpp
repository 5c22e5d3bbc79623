// The parallel reading stage of the read pipeline (read_parallel()): worker
// threads decode chunks into DecodedChunks, checking nothing across chunks;
// the calling thread replays them in file order through the table check
// (DirectSink), so the visitor sees exactly what read() would show it.
#pragma once

#include <atomic>
#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "memtrail/trace_file.hpp"
#include "reader/decode_error.hpp"
#include "reader/table_check.hpp"

namespace memtrail::reader {

// A chunk decoded on a worker thread, waiting to be replayed in file order.
// Reference checks need the ids of every earlier chunk, so they are left to
// the replay; whatever the decoder rejected follows the items as `error`.
struct DecodedChunk {
  struct String {
    std::uint32_t id;
    std::string text;
  };
  struct Switch {
    std::uint32_t thread;
  };
  using Record =
      std::variant<String, ModuleInfo, ThreadInfo, PoolInfo, StackNode, ScopeInfo, Switch>;
  std::vector<Event> events;
  std::vector<std::pair<std::size_t, Record>> records;  // (events before it, record)
  std::string error;                                    // non-empty: decoding stopped here
  bool error_event_refs = false;  // the failing event's pool/stack refs come first
  Event error_event;
  bool overflow = false;  // too many events to buffer: the replay decodes it itself

  void clear() {
    events.clear();
    records.clear();
    error.clear();
    error_event_refs = false;
    overflow = false;
  }
};

// Collects a chunk into a DecodedChunk, checking nothing across chunks.
struct BufferSink {
  DecodedChunk& out;
  const std::atomic<bool>& abort;
  std::size_t max_events;

  template <class R>
  void add(R&& rec) {
    out.records.emplace_back(out.events.size(), std::forward<R>(rec));
  }
  void string(std::uint32_t id, std::string_view text) {
    add(DecodedChunk::String{id, std::string(text)});
  }
  void module(const ModuleInfo& m) { add(m); }
  void thread(const ThreadInfo& t) { add(t); }
  void pool(const PoolInfo& p) { add(p); }
  void stack_node(const StackNode& n) { add(n); }
  void scope(const ScopeInfo& s) { add(s); }
  void thread_switch(std::uint32_t thread) { add(DecodedChunk::Switch{thread}); }
  void event_refs(const Event&) {}
  [[noreturn]] void fail_after_refs(const Event& e, const char* what) {
    out.error_event = e;
    out.error_event_refs = true;
    throw DecodeError{what};
  }
  Event scratch;
  Event& slot() { return scratch; }
  bool commit() {
    out.events.push_back(scratch);
    return keep_going();
  }
  bool keep_going() {
    return out.events.size() < max_events && !abort.load(std::memory_order_relaxed);
  }
};

// Replays a decoded chunk into `sink` exactly as read() would have delivered
// it: records at their place between the events, references checked in
// order, then the decoder's error if any. False when the visitor stopped.
inline bool replay(const DecodedChunk& c, DirectSink& sink) {
  auto record = [&](const DecodedChunk::Record& rec) {
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, DecodedChunk::String>)
            sink.string(x.id, x.text);
          else if constexpr (std::is_same_v<T, ModuleInfo>)
            sink.module(x);
          else if constexpr (std::is_same_v<T, ThreadInfo>)
            sink.thread(x);
          else if constexpr (std::is_same_v<T, PoolInfo>)
            sink.pool(x);
          else if constexpr (std::is_same_v<T, StackNode>)
            sink.stack_node(x);
          else if constexpr (std::is_same_v<T, ScopeInfo>)
            sink.scope(x);
          else
            sink.thread_switch(x.thread);
        },
        rec);
    return sink.keep_going();
  };
  std::size_t next = 0;
  const std::size_t records = c.records.size();
  for (std::size_t i = 0; i < c.events.size(); ++i) {
    while (next < records && c.records[next].first == i)
      if (!record(c.records[next++].second)) return false;
    const Event& e = c.events[i];
    sink.event_refs(e);
    if (!sink.event(e)) return false;
  }
  while (next < records)
    if (!record(c.records[next++].second)) return false;
  if (c.error_event_refs) sink.event_refs(c.error_event);
  if (!c.error.empty()) throw DecodeError{c.error};
  return true;
}

}  // namespace memtrail::reader
