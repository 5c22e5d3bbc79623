// The table check stage of the read pipeline: every table reference of a
// decoded record or event (pool, stack node, thread, scope, string) must
// name an id defined earlier in the file. DirectSink delivers decoded items
// to the visitor in file order and checks them on the way; the chunk
// decoder writes into it (read(), read_ahead(), read_fed(), read_from()),
// or the parallel read replays decoded chunks into it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "memtrail/trace_file.hpp"
#include "reader/decode_error.hpp"

namespace memtrail::reader {

// The defined ids of one table. Writers hand ids out densely from 1, so a
// bitmap answers the per-event reference checks with one load where a hash
// set cost a hash and a probe; ids past kDenseIds (only a hostile file has
// them) go to a hash set so the bitmap stays bounded.
class IdSet {
 public:
  static constexpr std::uint32_t kDenseIds = 1u << 24;  // 2 MiB of bits at most
  bool contains(std::uint32_t id) const {
    if (all_) [[unlikely]]
      return true;
    if (id < kDenseIds) {
      std::size_t w = id >> 6;
      return w < bits_.size() && ((bits_[w] >> (id & 63)) & 1);
    }
    return sparse_.count(id) != 0;
  }
  void insert(std::uint32_t id) {
    if (all_) return;
    if (id >= kDenseIds) {
      sparse_.insert(id);
      return;
    }
    std::size_t w = id >> 6;
    if (w >= bits_.size()) bits_.resize(std::max<std::size_t>(w + 1, bits_.size() * 2), 0);
    bits_[w] |= std::uint64_t{1} << (id & 63);
    while (prefix_ + 1 < kDenseIds && contains(prefix_ + 1)) ++prefix_;
  }
  // Every id in 1..prefix() is defined (0 is "none": always valid).
  std::uint32_t prefix() const { return prefix_; }
  void clear() {
    bits_.clear();
    sparse_.clear();
    prefix_ = 0;
    all_ = false;
  }
  // Every id counts as defined (read_from(): the tables are in chunks
  // before the one the read starts at).
  void accept_all() {
    clear();
    all_ = true;
    prefix_ = ~std::uint32_t{0};
  }

 private:
  std::uint32_t prefix_ = 0;
  bool all_ = false;
  std::vector<std::uint64_t> bits_;
  std::unordered_set<std::uint32_t> sparse_;
};

// Inlined per event; only the error path is out of line.
inline void defined(const IdSet& set, std::uint32_t id, const char* table) {
  if (id != 0 && !set.contains(id)) [[unlikely]]
    undefined_reference(table, id);
}

// The ids each table has defined so far (file-wide, in file order).
struct DefinedIds {
  IdSet strings, modules, threads, pools, stack_nodes, scopes;
  void clear() {
    strings.clear();
    modules.clear();
    threads.clear();
    pools.clear();
    stack_nodes.clear();
    scopes.clear();
  }
  void accept_all() {
    for (IdSet* s : {&strings, &modules, &threads, &pools, &stack_nodes, &scopes}) s->accept_all();
  }
};

// Delivers decoded items straight to the visitor in file order, checking
// every table reference against the ids defined so far. read() decodes into
// it; read_parallel() replays decoded chunks into it. A visitor with an
// event buffer (TraceVisitor::event_buffer) gets events stored into it and
// one events_stored() call per filled buffer, before any record and before
// the read returns (flush()).
struct DirectSink {
  DefinedIds& ids;
  TraceVisitor& v;
  ReadResult& r;
  Event* begin = nullptr;  // batch delivery: the visitor's buffer,
  Event* next = nullptr;   // null when it has none
  Event* end = nullptr;

  DirectSink(DefinedIds& i, TraceVisitor& visitor, ReadResult& result)
      : ids(i), v(visitor), r(result) {
    refill();
  }
  void refill() {
    std::span<Event> b = v.event_buffer();
    begin = next = b.empty() ? nullptr : b.data();
    end = begin ? b.data() + b.size() : nullptr;
  }
  // Hands the stored events to the visitor.
  void flush() {
    if (next == begin) return;
    v.events_stored(static_cast<std::size_t>(next - begin));
    refill();
  }

  void string(std::uint32_t id, std::string_view text) {
    flush();
    ids.strings.insert(id);
    v.on_string(id, text);
  }
  void module(const ModuleInfo& m) {
    flush();
    ids.modules.insert(m.id);
    v.on_module(m);
  }
  void thread(const ThreadInfo& t) {
    flush();
    ids.threads.insert(t.id);
    v.on_thread(t);
  }
  void pool(const PoolInfo& p) {
    flush();
    defined(ids.pools, p.parent, "pool");
    ids.pools.insert(p.id);
    v.on_pool(p);
  }
  void stack_node(const StackNode& n) {
    flush();
    defined(ids.stack_nodes, n.parent, "stack node");
    ids.stack_nodes.insert(n.id);
    v.on_stack_node(n);
  }
  void scope(const ScopeInfo& s) {
    flush();
    defined(ids.pools, s.pool, "pool");
    ids.scopes.insert(s.id);
    v.on_scope(s);
  }
  void thread_switch(std::uint32_t thread) { defined(ids.threads, thread, "thread"); }
  // The references every event has, checked before its aux range. Writers
  // define ids densely from 1, so one compare with the defined prefix
  // mostly settles it.
  void event_refs(const Event& e) {
    if (e.pool > ids.pools.prefix()) [[unlikely]]
      defined(ids.pools, e.pool, "pool");
    if (e.stack > ids.stack_nodes.prefix()) [[unlikely]]
      defined(ids.stack_nodes, e.stack, "stack node");
  }
  [[noreturn]] void fail_after_refs(const Event&, const char* what) { throw DecodeError{what}; }
  // Where the decoder builds the next event: the visitor's buffer, or
  // `scratch` when it has none.
  Event scratch;
  Event& slot() { return next ? *next : scratch; }
  // Delivers the event built in slot(): the aux reference (range already
  // checked), then the visitor. False: stop reading.
  bool commit() {
    if (!next) return deliver(scratch);
    if (next->aux != 0) [[unlikely]]  // aux 0 refers to nothing
      aux_reference(*next);
    ++r.events;
    if (++next != end) [[likely]]
      return true;
    flush();
    return v.keep_going();
  }
  // An event decoded elsewhere (a replayed chunk).
  bool event(const Event& e) {
    if (!next) return deliver(e);
    *next = e;
    return commit();
  }
  bool deliver(const Event& e) {
    if (e.aux != 0) [[unlikely]]
      aux_reference(e);
    ++r.events;
    v.on_event(e);
    return v.keep_going();
  }
  void aux_reference(const Event& e) {
    switch (aux_id_of(e.kind)) {
      case AuxId::scope:
        defined(ids.scopes, static_cast<std::uint32_t>(e.aux), "scope");
        break;
      case AuxId::string:
        defined(ids.strings, static_cast<std::uint32_t>(e.aux), "string");
        break;
      case AuxId::none:
        break;
    }
  }
  bool keep_going() { return v.keep_going(); }
};

}  // namespace memtrail::reader
