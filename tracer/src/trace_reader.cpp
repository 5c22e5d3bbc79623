// TraceReader: streams a .mtr file chunk by chunk. Memory is bounded by one
// chunk (its payload plus its alloc-ordinal table) and the sets of defined
// table ids; read_parallel() holds up to decoders + 1 decoded chunks on top.
// Every malformed input ends in a one-line error naming the byte offset of
// the chunk; a file cut mid-chunk reads up to its last whole chunk.
#include <sys/stat.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

#include "byte_io.hpp"
#include "codec/thread_model.hpp"
#include "format_layout.hpp"
#include "memtrail/size.hpp"
#include "memtrail/trace_file.hpp"
#include "model_scan.hpp"

namespace memtrail {

using namespace format;

namespace {

std::uint32_t crc32_of(const void* data, std::size_t n) {
  return static_cast<std::uint32_t>(
      ::crc32(0, static_cast<const Bytef*>(data), static_cast<uInt>(n)));
}

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f) std::fclose(f);
  }
};

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

// Thrown inside chunk decoding; turned into ReadResult::error.
struct DecodeError {
  std::string what;
};

[[noreturn, gnu::noinline, gnu::cold]] void undefined_reference(const char* table,
                                                                std::uint32_t id) {
  throw DecodeError{std::string("reference to undefined ") + table + " " + std::to_string(id)};
}

[[noreturn, gnu::noinline, gnu::cold]] void undecodable(const char* what) {
  throw DecodeError{std::string("undecodable ") + what};
}

// A check of the decode loop: inline, only the error path is a call.
[[gnu::always_inline]] inline void need(bool ok, const char* what) {
  if (!ok) [[unlikely]]
    undecodable(what);
}

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

// One chunk's frame, checked (header and payload crc32, sizes); the payload
// still compressed.
struct Frame {
  std::uint64_t offset = 0;  // of the frame in the file
  std::uint64_t raw = 0;     // payload bytes once decompressed
  std::uint32_t count = 0;   // declared events
  std::size_t stored_size = 0;
  std::string stored;  // stored_size payload bytes, then the trailer
};

enum class FrameKind { data, end, stop, eof };

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
bool replay(const DecodedChunk& c, DirectSink& sink) {
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

// The payload of `f`, decompressed into `out`. Throws DecodeError.
void decompress_into(ZSTD_DCtx* dctx, const Frame& f, std::string& out) {
  out.resize(f.raw);
  std::size_t n = ZSTD_decompressDCtx(dctx, out.data(), f.raw, f.stored.data(), f.stored_size);
  if (ZSTD_isError(n) || n != f.raw)
    throw DecodeError{"undecodable chunk (zstd: " +
                      (ZSTD_isError(n) ? std::string(ZSTD_getErrorName(n)) : "size mismatch") +
                      ")"};
}

// Decompresses and decodes chunks. One per thread; its buffers and thread
// states keep their capacity from chunk to chunk.
struct ChunkDecoder {
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  std::string payload;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ordinals;  // alloc (address, size)
  // Prediction state per thread of the chunk: thread id -> index into
  // `states`, whose objects are reset and reused from chunk to chunk.
  std::unordered_map<std::uint32_t, std::uint32_t> state_of_thread;
  std::vector<std::unique_ptr<DecoderThreadState>> states;
  static constexpr std::size_t kKeptThreadStates = 64;

  // The last two threads' states: chunks mostly alternate between a few
  // threads, and a switch then costs no hash lookup. Cleared per chunk.
  std::uint32_t recent_thread[2] = {0, 0};
  DecoderThreadState* recent_state[2] = {nullptr, nullptr};

  DecoderThreadState& state_for(std::uint32_t thread) {
    if (recent_state[0] && recent_thread[0] == thread) return *recent_state[0];
    if (!(recent_state[1] && recent_thread[1] == thread)) {
      recent_state[1] = &state_lookup(thread);
      recent_thread[1] = thread;
    }
    std::swap(recent_state[0], recent_state[1]);
    std::swap(recent_thread[0], recent_thread[1]);
    return *recent_state[0];
  }
  DecoderThreadState& state_lookup(std::uint32_t thread) {
    auto [it, fresh] =
        state_of_thread.try_emplace(thread, static_cast<std::uint32_t>(state_of_thread.size()));
    if (!fresh) return *states[it->second];
    if (state_of_thread.size() > kMaxThreadsPerChunk)
      throw DecodeError{"more than " + std::to_string(kMaxThreadsPerChunk) +
                        " threads with events in one chunk"};
    if (it->second == states.size()) states.push_back(std::make_unique<DecoderThreadState>());
    DecoderThreadState& st = *states[it->second];
    st.reset();
    return st;
  }

  ChunkDecoder() = default;
  ChunkDecoder(const ChunkDecoder&) = delete;
  ChunkDecoder& operator=(const ChunkDecoder&) = delete;
  ~ChunkDecoder() { ZSTD_freeDCtx(dctx); }

  void decompress(const Frame& f) { decompress_into(dctx, f, payload); }

  // Decodes the decompressed payload of `f` into `sink`. Throws DecodeError;
  // false when the sink stopped.
  template <class Sink>
  bool decode(const Frame& f, std::uint64_t time_resolution, Sink& sink);
};

template <class Sink>
bool ChunkDecoder::decode(const Frame& f, std::uint64_t time_resolution, Sink& sink) {
  ByteSource whole(payload.data(), f.raw);
  ByteSource s[kStreamCount];
  std::uint64_t lengths[kStreamCount];
  for (auto& n : lengths)
    if (!whole.varint(n)) throw DecodeError{"undecodable stream table"};
  for (int i = 0; i < kStreamCount; ++i)
    if (!whole.take(lengths[i], s[i])) throw DecodeError{"stream lengths exceed the chunk"};
  if (!whole.empty()) throw DecodeError{"trailing bytes after the streams"};

  ByteSource& ops = s[kOps];
  std::uint32_t current_thread = 0;
  state_of_thread.clear();  // prediction state is per chunk
  recent_state[0] = recent_state[1] = nullptr;
  // ~70 KiB each: keep enough for ordinary chunks, not a hostile chunk's 1024.
  if (states.size() > kKeptThreadStates) states.resize(kKeptThreadStates);
  ordinals.clear();
  DecoderThreadState* current_state = nullptr;  // of current_thread; null after a switch
  std::uint64_t chunk_events = 0;
  // Events numbered (from 1) below this keep the address model up; later
  // ones feed no candidate-coded alloc (model_scan.hpp).
  const std::uint64_t model_events = events_needing_model(ops);

  auto table_id = [&](std::uint32_t& id, const char* what) {
    need(ops.varint32(id), what);
    if (id == 0) throw DecodeError{std::string(what) + " record with id 0"};
  };

  while (!ops.empty()) {
    std::uint8_t op;
    ops.u8(op);
    if (op & kRecordBit) {
      std::string_view text;
      switch (op & ~kRecordBit) {
        case kTagString: {
          std::uint32_t id;
          table_id(id, "string");
          need(ops.str(text), "string record");
          sink.string(id, text);
          break;
        }
        case kTagModule: {
          ModuleInfo m;
          std::string_view build_id;
          table_id(m.id, "module");
          need(ops.str(text) && ops.varint(m.load_address) && ops.varint(m.start) &&
                   ops.varint(m.end) && ops.str(build_id),
               "module record");
          m.path = text;
          m.build_id = build_id;
          sink.module(m);
          break;
        }
        case kTagThread: {
          ThreadInfo t;
          table_id(t.id, "thread");
          need(ops.varint(t.tid) && ops.str(text), "thread record");
          t.name = text;
          sink.thread(t);
          break;
        }
        case kTagPool: {
          PoolInfo p;
          std::uint8_t kind = 0, space = 0;
          std::int64_t device = 0;
          table_id(p.id, "pool");
          need(ops.varint32(p.parent) && ops.str(text) && ops.u8(kind) && ops.u8(space) &&
                   ops.svarint(device),
               "pool record");
          need(kind <= static_cast<std::uint8_t>(PoolKind::other) &&
                   space <= static_cast<std::uint8_t>(MemorySpace::mmap) && device >= INT32_MIN &&
                   device <= INT32_MAX,
               "pool record (value out of range)");
          p.name = text;
          p.kind = static_cast<PoolKind>(kind);
          p.space = static_cast<MemorySpace>(space);
          p.device = static_cast<std::int32_t>(device);
          sink.pool(p);
          break;
        }
        case kTagStackNode: {
          StackNode n;
          table_id(n.id, "stack node");
          need(ops.varint32(n.parent) && ops.varint(n.ip), "stack node record");
          sink.stack_node(n);
          break;
        }
        case kTagScope: {
          ScopeInfo sc;
          std::uint8_t kind = 0;
          table_id(sc.id, "scope");
          need(ops.str(text) && ops.u8(kind) && ops.varint32(sc.pool), "scope record");
          need(kind <= static_cast<std::uint8_t>(ScopeKind::iteration),
               "scope record (kind out of range)");
          sc.name = text;
          sc.kind = static_cast<ScopeKind>(kind);
          sink.scope(sc);
          break;
        }
        case kTagThreadSwitch:
          need(ops.varint32(current_thread), "thread switch");
          current_state = nullptr;
          sink.thread_switch(current_thread);
          break;
        default:
          throw DecodeError{"unknown record tag " + std::to_string(op & ~kRecordBit)};
      }
      if (!sink.keep_going()) return false;
      continue;
    }

    // An event.
    std::uint8_t kind_index = op & kOpKindMask;
    if (kind_index == 0 || kind_index >= kEventKindCount)
      throw DecodeError{"unknown event kind " + std::to_string(kind_index)};
    std::uint8_t mask = 0;
    need(ops.u8(mask), "event field mask");
    // Decoded in place: into the visitor's buffer when it has one.
    Event& e = sink.slot();
    e.address = 0;
    e.size = 0;
    e.aux = 0;
    e.kind = static_cast<EventKind>(kind_index);
    e.thread = current_thread;
    if (!current_state) current_state = &state_for(current_thread);  // once per thread switch
    DecoderThreadState& st = *current_state;

    std::uint64_t dt = 0;
    need(split_varint(s[kTime], s[kTimeHigh], dt), "event time");
    std::uint64_t units = (op & kOpTimeBack) ? st.last_time - dt : st.last_time + dt;
    e.time_ns = units * time_resolution;

    e.pool = st.last_pool;
    e.stack = st.last_stack[kind_index];
    e.detail = st.last_detail[kind_index];
    if (mask & kMaskPool) need(s[kMisc].varint32(e.pool), "event pool");
    if (mask & kMaskStack) {
      std::uint64_t code;
      need(s[kMisc].varint(code) && st.stack_of_code(kind_index, code, e.stack), "event stack");
    }
    if (mask & kMaskDetail) need(s[kMisc].u8(e.detail), "event detail");
    if (mask & kMaskAux) need(s[kMisc].varint(e.aux), "event aux");

    std::uint64_t ref_size = 0;
    bool has_ref = op & kOpAddrRef;
    bool is_free = e.kind == EventKind::free;
    bool alloc = is_alloc_kind(e.kind);
    if (has_ref) {
      if (mask & kMaskAddr) throw DecodeError{"event with two addresses"};
      if (!is_free && !alloc)
        throw DecodeError{"address reference on a " + std::string(to_string(e.kind)) + " event"};
    }
    if (has_ref && is_free) {
      std::uint64_t d;
      need(s[kAddr].varint(d), "event address reference");
      if (d == 0 || d > ordinals.size())
        throw DecodeError{"address reference " + std::to_string(d) + " out of range"};
      std::tie(e.address, ref_size) = ordinals[ordinals.size() - d];
    }
    int slot = -1;
    switch (static_cast<SizeMode>((mask >> kMaskSizeShift) & 3)) {
      case kSizeZero:
        break;
      case kSizeCached: {
        std::uint8_t i = 0;
        need(s[kSize].u8(i) && i < kSizeSlots, "event size slot");
        slot = i;
        e.size = st.slot_size[slot];
        break;
      }
      case kSizeExplicit:
        need(split_varint(s[kSize], s[kSizeHigh], e.size), "event size");
        slot = st.insert_size(e.size);
        break;
      case kSizeOfRef:
        if (!has_ref || !is_free)
          throw DecodeError{"size refers to a block without an address reference"};
        e.size = ref_size;
        break;
    }
    e.requested = default_requested(e.kind, e.size);
    if (mask & kMaskRequested) {
      std::int64_t diff = 0;
      need(s[kSize].svarint(diff), "event requested size");
      e.requested = e.size - static_cast<std::uint64_t>(diff);
    }
    const bool model = chunk_events + 1 < model_events;
    std::uint64_t cls = 0;
    int bucket = 0;  // of cls: computed once for both questions below
    if (alloc && (has_ref || model)) {
      cls = chunk_class(e.size);
      bucket = codec::ClassFrees::bucket_of(cls);
    }
    if (has_ref && alloc) {
      std::uint64_t d;
      need(s[kAddr].varint(d), "event address reference");
      if (!st.alloc_address_at(bucket, cls, d, e.address))
        throw DecodeError{"address candidate " + std::to_string(d) + " out of range"};
    }
    if (!has_ref && (mask & kMaskAddr)) {
      std::uint64_t zz = 0;
      need(split_varint(s[kAddr], s[kAddrHigh], zz), "event address");
      std::int64_t delta = unzigzag(zz);
      std::uint64_t predicted = slot >= 0 ? st.slot_address[slot] : st.last_address;
      e.address = predicted + static_cast<std::uint64_t>(delta);
    }

    st.last_time = units;
    st.last_pool = e.pool;
    st.set_stack(kind_index, e.stack);
    st.last_detail[kind_index] = e.detail;
    st.last_address = e.address;
    if (slot >= 0) st.slot_address[slot] = e.address;
    if (model) {
      if (is_free && e.address != 0) st.push_freed(e.address, e.size != 0 ? e.size : ref_size);
      if (alloc && e.address != 0) {
        st.take_freed(bucket, cls, e.address);
        st.push_fresh(e.address + cls);
      }
    }
    if (alloc) ordinals.emplace_back(e.address, e.size);

    sink.event_refs(e);
    if (e.aux > 0xffffffffu) [[unlikely]] {
      switch (aux_id_of(e.kind)) {
        case AuxId::scope:
          sink.fail_after_refs(e, "scope id out of range");
        case AuxId::string:
          sink.fail_after_refs(e, "string id out of range");
        case AuxId::none:
          break;
      }
    }
    ++chunk_events;
    if (!sink.commit()) return false;
  }
  for (int i = 1; i < kStreamCount; ++i)
    if (!s[i].empty()) throw DecodeError{"unused bytes in a value stream"};
  if (chunk_events != f.count)
    throw DecodeError{"chunk declares " + std::to_string(f.count) + " events but holds " +
                      std::to_string(chunk_events)};
  return true;
}

}  // namespace

struct TraceReader::Impl {
  std::string path;
  std::unique_ptr<std::FILE, FileCloser> file;
  std::uint64_t file_size = 0;
  std::uint64_t data_offset = 0;  // first chunk
  std::string header_error;
  TraceHeader header;

  DefinedIds ids;        // file-wide
  Frame frame;           // read()'s current chunk
  ChunkDecoder decoder;  // read()'s decoder

  void read_header();
  std::string at(std::uint64_t off) const { return " in chunk at byte " + std::to_string(off); }
  bool start(TraceVisitor& v, ReadResult& r);
  FrameKind next_frame(std::uint64_t& offset, Frame& f, ReadResult& stop);
  void end_of_trace(ReadResult& r, const Frame& end, std::uint64_t offset) const;
  void read_chunks(DirectSink& sink, ReadResult& r, std::uint64_t offset);
  bool from_middle = false;  // read_from(): the end marker's count covers more
  void read_chunks_ahead(DirectSink& sink, ReadResult& r, AheadSlots& ahead);
  // Decodes the chunk whose decompressed payload is in decoder.payload.
  // False: the read ends here (`r` says why).
  bool decode_chunk(const Frame& f, DirectSink& sink, ReadResult& r);
};

void TraceReader::Impl::read_header() {
  // Checked before opening: opening a FIFO blocks until it has a writer, and
  // the reader seeks (and parallel reads reopen the file), which a pipe,
  // socket or device cannot do.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    header_error = path + (S_ISDIR(st.st_mode) ? ": is a directory, not a trace"
                           : S_ISFIFO(st.st_mode)
                               ? ": is a pipe; traces are read from regular files only (save it "
                                 "to a file first)"
                               : ": not a regular file; traces are read from regular files only");
    return;
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    header_error = path + ": cannot open: " + std::strerror(errno);
    return;
  }
  file.reset(f);
  if (std::fseek(f, 0, SEEK_END) == 0) {
    long end = std::ftell(f);
    file_size = end > 0 ? static_cast<std::uint64_t>(end) : 0;
    std::fseek(f, 0, SEEK_SET);
  }
  unsigned char fixed[16];
  std::size_t got = std::fread(fixed, 1, sizeof fixed, f);
  if (got < sizeof kMagic || std::memcmp(fixed, kMagic, sizeof kMagic) != 0) {
    header_error = path + ": not a memtrail trace (bad magic)";
    return;
  }
  if (got < sizeof fixed) {
    header_error = path + ": truncated header (" + std::to_string(file_size) + " bytes)";
    return;
  }
  ByteSource src(reinterpret_cast<const char*>(fixed) + 8, 8);
  std::uint64_t version, flags, length;
  src.fixed(version, 2);
  src.fixed(flags, 2);
  src.fixed(length, 4);
  header.version = static_cast<std::uint16_t>(version);
  if (flags != 0 && version == kTraceFormatVersion) {
    header_error = path + ": unsupported header flags " + std::to_string(flags);
    return;
  }
  if (version != kTraceFormatVersion) {
    header_error = path + ": unsupported version " + std::to_string(version) +
                   " (this build reads version " + std::to_string(kTraceFormatVersion) + ")";
    return;
  }
  if (length > kMaxHeaderPayload || 16 + length + 4 > file_size) {
    header_error = path + ": truncated or corrupt header (payload of " + std::to_string(length) +
                   " bytes at byte 16)";
    return;
  }
  std::string body(length + 4, '\0');
  if (std::fread(body.data(), 1, body.size(), f) != body.size()) {
    header_error = path + ": truncated header";
    return;
  }
  ByteSource crc_src(body.data() + length, 4);
  std::uint64_t crc;
  crc_src.fixed(crc, 4);
  std::uint32_t expected = static_cast<std::uint32_t>(
      ::crc32(crc32_of(fixed + 8, 8), reinterpret_cast<const Bytef*>(body.data()),
              static_cast<uInt>(length)));
  if (crc != expected) {
    header_error = path + ": checksum mismatch in header at byte 16";
    return;
  }
  ByteSource b(body.data(), length);
  std::uint64_t pid = 0, ppid = 0, rt = 0, mono = 0, clock = 0;
  bool ok = b.fixed(pid, 4) && b.fixed(ppid, 4) && b.fixed(rt, 8) && b.fixed(mono, 8) &&
            b.fixed(clock, 4);
  std::string* strs[] = {&header.command_line, &header.executable, &header.hostname};
  for (std::string* s : strs) {
    std::uint64_t n;
    ByteSource sub;
    ok = ok && b.fixed(n, 4) && b.take(n, sub);
    if (ok) s->assign(body.data() + (length - b.remaining() - n), n);
  }
  std::uint64_t resolution = 0;
  ok = ok && b.fixed(resolution, 4) && b.empty();
  if (!ok) {
    header_error = path + ": undecodable header at byte 16";
    return;
  }
  header.pid = static_cast<std::uint32_t>(pid);
  header.ppid = static_cast<std::uint32_t>(ppid);
  header.start_realtime_ns = rt;
  header.start_monotonic_ns = mono;
  header.clock_id = static_cast<std::uint32_t>(clock);
  if (resolution == 0 || resolution > kMaxTimeResolution) {
    header_error = path + ": time resolution " + std::to_string(resolution) +
                   " ns in the header is outside 1..1000000000";
    return;
  }
  header.time_resolution_ns = static_cast<std::uint32_t>(resolution);
  data_offset = 16 + length + 4;
}

// What both read paths do before the first chunk. False: `r` is final.
bool TraceReader::Impl::start(TraceVisitor& v, ReadResult& r) {
  if (!header_error.empty()) {
    r.error = header_error;
    return false;
  }
  v.on_header(header);
  ids.clear();
  if (std::fseek(file.get(), static_cast<long>(data_offset), SEEK_SET) != 0) {
    r.error = path + ": cannot seek to byte " + std::to_string(data_offset);
    return false;
  }
  if (!v.keep_going()) {
    r.ok = true;
    return false;
  }
  return true;
}

// Reads and checks the frame at `offset` and advances past it. `data` and
// `end` fill `f`; `stop` fills `stop` (ok + dropped bytes for a cut file, or
// the error); `eof` means no bytes are left.
FrameKind TraceReader::Impl::next_frame(std::uint64_t& offset, Frame& f, ReadResult& stop) {
  if (offset >= file_size) return FrameKind::eof;
  auto cut = [&](std::uint64_t off) {
    stop.ok = true;
    stop.dropped_bytes = file_size - off;
    stop.warning = path + ": dropped " + count_text(stop.dropped_bytes, "byte") +
                   " after the last whole chunk";
    return FrameKind::stop;
  };
  auto fail = [&](std::string what) {
    stop.error = std::move(what);
    return FrameKind::stop;
  };
  std::FILE* file_ptr = file.get();
  unsigned char fh[kFrameHeaderBytes];
  if (file_size - offset < kFrameHeaderBytes) return cut(offset);
  if (std::fread(fh, 1, sizeof fh, file_ptr) != sizeof fh)
    return fail(path + ": read error" + at(offset));
  ByteSource h(reinterpret_cast<const char*>(fh), sizeof fh);
  std::uint64_t type = 0, stored = 0, raw = 0, count = 0, hcrc = 0;  // 17 bytes: all read
  h.fixed(type, 1);
  h.fixed(stored, 4);
  h.fixed(raw, 4);
  h.fixed(count, 4);
  h.fixed(hcrc, 4);
  if (hcrc != crc32_of(fh, 13))
    return fail(path + ": checksum mismatch" + at(offset) + " (frame header)");
  if (type != kChunkData && type != kChunkEnd)
    return fail(path + ": unknown chunk type " + std::to_string(type) + at(offset));
  if (raw > kMaxRawChunk || stored > ZSTD_compressBound(raw) ||
      (type == kChunkEnd && (stored != 0 || raw != 0)))
    return fail(path + ": implausible chunk size (" + std::to_string(stored) + " stored, " +
                std::to_string(raw) + " raw)" + at(offset));
  if (file_size - offset < kFrameHeaderBytes + stored + kFrameTrailerBytes) return cut(offset);
  f.stored.resize(stored + kFrameTrailerBytes);
  if (std::fread(f.stored.data(), 1, f.stored.size(), file_ptr) != f.stored.size())
    return fail(path + ": read error" + at(offset));
  ByteSource t(f.stored.data() + stored, kFrameTrailerBytes);
  std::uint64_t pcrc;
  t.fixed(pcrc, 4);
  if (pcrc != crc32_of(f.stored.data(), stored))
    return fail(path + ": checksum mismatch" + at(offset));
  f.offset = offset;
  f.raw = raw;
  f.count = static_cast<std::uint32_t>(count);
  f.stored_size = stored;
  offset += kFrameHeaderBytes + stored + kFrameTrailerBytes;
  if (type == kChunkEnd) return FrameKind::end;
  // The frame must declare exactly R bytes before R bytes are allocated.
  if (ZSTD_getFrameContentSize(f.stored.data(), stored) != raw)
    return fail(path + ": undecodable chunk (zstd frame does not declare " + std::to_string(raw) +
                " bytes)" + at(f.offset));
  return FrameKind::data;
}

// The end-of-trace marker `end`, after every chunk before it was delivered.
void TraceReader::Impl::end_of_trace(ReadResult& r, const Frame& end, std::uint64_t offset) const {
  r.complete = true;
  if (end.count != 0xffffffffu && end.count != r.events && !from_middle) {
    r.error = path + ": end marker counts " + std::to_string(end.count) + " events but " +
              std::to_string(r.events) + " were read" + at(end.offset);
    return;
  }
  if (offset < file_size)
    r.warning = path + ": ignored " + count_text(file_size - offset, "byte") +
                " after the end-of-trace marker";
  r.ok = true;
}

namespace {

void take_stop(ReadResult& r, const ReadResult& stop) {
  r.ok = stop.ok;
  r.error = stop.error;
  r.dropped_bytes = stop.dropped_bytes;
  r.warning = stop.warning;
}

}  // namespace

TraceReader::TraceReader(std::string path) : impl_(std::make_unique<Impl>()) {
  impl_->path = std::move(path);
  impl_->read_header();
}

TraceReader::~TraceReader() = default;

const std::string& TraceReader::header_error() const {
  return impl_->header_error;
}
const TraceHeader& TraceReader::header() const {
  return impl_->header;
}

bool TraceReader::ends_with_end_marker() const {
  constexpr int kEndFrameBytes = kFrameHeaderBytes + kFrameTrailerBytes;  // no payload
  if (!impl_->header_error.empty() || impl_->file_size < kEndFrameBytes) return false;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(impl_->path.c_str(), "rb"),
                                                       &std::fclose);
  unsigned char b[kEndFrameBytes];
  if (!file || std::fseek(file.get(), -kEndFrameBytes, SEEK_END) != 0 ||
      std::fread(b, 1, sizeof b, file.get()) != sizeof b)
    return false;
  ByteSource h(reinterpret_cast<const char*>(b), sizeof b);
  std::uint64_t type = 0, stored = 0, raw = 0, count = 0, hcrc = 0, pcrc = 0;
  h.fixed(type, 1);
  h.fixed(stored, 4);
  h.fixed(raw, 4);
  h.fixed(count, 4);
  h.fixed(hcrc, 4);
  h.fixed(pcrc, 4);
  return type == kChunkEnd && stored == 0 && raw == 0 && hcrc == crc32_of(b, 13) &&
         pcrc == crc32_of(b, 0);
}

ReadResult TraceReader::read(TraceVisitor& visitor) {
  ReadResult r;
  Impl& m = *impl_;
  if (!m.start(visitor, r)) return r;
  DirectSink sink{m.ids, visitor, r};
  m.read_chunks(sink, r, m.data_offset);
  sink.flush();  // the events decoded before the end, the stop or the error
  return r;
}

ReadResult TraceReader::read_from(TraceVisitor& visitor, std::uint64_t chunk_offset) {
  ReadResult r;
  Impl& m = *impl_;
  if (!m.start(visitor, r)) return r;
  if (chunk_offset < m.data_offset || chunk_offset > m.file_size ||
      std::fseek(m.file.get(), static_cast<long>(chunk_offset), SEEK_SET) != 0) {
    r.error = m.path + ": no chunk at byte " + std::to_string(chunk_offset);
    return r;
  }
  m.ids.accept_all();
  m.from_middle = true;
  DirectSink sink{m.ids, visitor, r};
  m.read_chunks(sink, r, chunk_offset);
  sink.flush();
  m.from_middle = false;
  return r;
}

// The read-ahead of read_ahead() and read_fed(): frames read, checked and
// decompressed one chunk ahead of the decoder into two slots, one being
// decoded, one being filled. One filler at a time (the reader's own thread,
// or the caller's through ChunkFeed::fill()); chunks are taken in file order
// and a chunk's frame or zstd error is reported when its turn comes.
struct TraceReader::AheadSlots {
  struct Ready {
    FrameKind kind = FrameKind::eof;
    Frame frame;
    ReadResult stop;
    std::uint64_t next_offset = 0;  // past the frame
    std::string payload;            // decompressed (kind data, no error)
    std::string error;              // the zstd error (kind data)
  };
  static constexpr std::size_t kSlots = 2;
  Ready slots[kSlots];
  std::mutex mu;
  std::condition_variable cv;
  std::size_t produced = 0, consumed = 0;  // under mu
  bool quit = false;                       // under mu: the decoder is done
  bool finished = false;                   // under mu: the last slot is filled
  Impl* impl = nullptr;                    // under mu: set when the read starts
  std::uint64_t offset = 0;                // the filler's
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  std::function<void()> slot_freed;

  AheadSlots() = default;
  AheadSlots(const AheadSlots&) = delete;
  AheadSlots& operator=(const AheadSlots&) = delete;
  ~AheadSlots() { ZSTD_freeDCtx(dctx); }

  bool fillable_locked() const {
    return impl && !quit && !finished && produced - consumed < kSlots;
  }
  bool fillable() {
    std::lock_guard lock(mu);
    return fillable_locked();
  }
  // Fills the next slot if one is free; false when there was nothing to do.
  bool fill() {
    std::size_t n;
    {
      std::lock_guard lock(mu);
      if (!fillable_locked()) return false;
      n = produced;
    }
    Ready& c = slots[n % kSlots];
    c.stop = ReadResult{};
    c.error.clear();
    c.kind = impl->next_frame(offset, c.frame, c.stop);
    c.next_offset = offset;
    if (c.kind == FrameKind::data) {
      try {
        decompress_into(dctx, c.frame, c.payload);
      } catch (const DecodeError& e) {
        c.error = e.what;
      }
    }
    {
      std::lock_guard lock(mu);
      produced = n + 1;
      finished = c.kind != FrameKind::data || !c.error.empty();
    }
    cv.notify_all();
    return true;
  }
  // The reader's own filler thread: fills until the last chunk or quit.
  void fill_until_done() {
    for (;;) {
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return quit || finished || produced - consumed < kSlots; });
        if (quit || finished) return;
      }
      fill();
    }
  }
  // The decoder: the next filled slot, or null once quit.
  Ready* next_ready() {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return quit || produced > consumed; });
    return produced > consumed ? &slots[consumed % kSlots] : nullptr;
  }
  void release() {
    {
      std::lock_guard lock(mu);
      ++consumed;
    }
    cv.notify_all();
    if (slot_freed) slot_freed();  // no lock held: the hook may take the caller's
  }
  void start(Impl& m) {
    {
      std::lock_guard lock(mu);
      impl = &m;
      offset = m.data_offset;
    }
    if (slot_freed) slot_freed();
  }
  void stop() {
    {
      std::lock_guard lock(mu);
      quit = true;
    }
    cv.notify_all();
  }
};

ReadResult TraceReader::read_ahead(TraceVisitor& visitor) {
  ReadResult r;
  Impl& m = *impl_;
  if (!m.start(visitor, r)) return r;
  DirectSink sink{m.ids, visitor, r};
  AheadSlots ahead;
  ahead.start(m);
  std::thread filler([&] { ahead.fill_until_done(); });
  struct Joiner {  // on every return path, also an exception from the visitor
    std::thread& t;
    AheadSlots& a;
    ~Joiner() {
      a.stop();
      t.join();
    }
  } joiner{filler, ahead};
  m.read_chunks_ahead(sink, r, ahead);
  sink.flush();
  return r;
}

ReadResult TraceReader::read_fed(TraceVisitor& visitor, ChunkFeed& feed) {
  ReadResult r;
  Impl& m = *impl_;
  AheadSlots& ahead = *feed.slots_;
  struct Stopper {  // the feeder must not wait for this read any more
    AheadSlots& a;
    ~Stopper() {
      a.stop();
      if (a.slot_freed) a.slot_freed();
    }
  } stopper{ahead};
  if (!m.start(visitor, r)) return r;
  DirectSink sink{m.ids, visitor, r};
  ahead.start(m);
  m.read_chunks_ahead(sink, r, ahead);
  sink.flush();
  return r;
}

void TraceReader::Impl::read_chunks(DirectSink& sink, ReadResult& r, std::uint64_t offset) {
  for (;;) {
    ReadResult stop;
    switch (next_frame(offset, frame, stop)) {
      case FrameKind::eof:
        r.ok = true;
        return;
      case FrameKind::stop:
        take_stop(r, stop);
        return;
      case FrameKind::end:
        end_of_trace(r, frame, offset);
        return;
      case FrameKind::data:
        break;
    }
    try {
      decoder.decompress(frame);
    } catch (const DecodeError& e) {
      r.error = path + ": " + e.what + at(frame.offset);
      return;
    }
    sink.flush();  // the events of earlier chunks come before the chunk's start
    sink.v.on_chunk(frame.offset);
    if (!decode_chunk(frame, sink, r)) return;
  }
}

bool TraceReader::Impl::decode_chunk(const Frame& f, DirectSink& sink, ReadResult& r) {
  try {
    if (!decoder.decode(f, header.time_resolution_ns, sink)) {
      r.ok = true;  // the visitor stopped reading inside this chunk
      return false;
    }
    ++r.chunks;
    return true;
  } catch (const DecodeError& e) {
    r.error = path + ": " + e.what + at(f.offset);
    return false;
  }
}

void TraceReader::Impl::read_chunks_ahead(DirectSink& sink, ReadResult& r, AheadSlots& ahead) {
  for (;;) {
    AheadSlots::Ready* c = ahead.next_ready();
    if (c == nullptr) {  // the feed was stopped: the caller stopped reading
      r.ok = true;
      return;
    }
    switch (c->kind) {
      case FrameKind::eof:
        r.ok = true;
        return;
      case FrameKind::stop:
        take_stop(r, c->stop);
        return;
      case FrameKind::end:
        end_of_trace(r, c->frame, c->next_offset);
        return;
      case FrameKind::data:
        break;
    }
    if (!c->error.empty()) {
      r.error = path + ": " + c->error + at(c->frame.offset);
      return;
    }
    sink.flush();  // the events of earlier chunks come before the chunk's start
    sink.v.on_chunk(c->frame.offset);
    // The payload moves in and out: both buffers keep their capacity.
    decoder.payload.swap(c->payload);
    bool more = decode_chunk(c->frame, sink, r);
    decoder.payload.swap(c->payload);
    if (!more) return;
    ahead.release();
  }
}

ChunkFeed::ChunkFeed() : slots_(std::make_unique<TraceReader::AheadSlots>()) {}
ChunkFeed::~ChunkFeed() = default;
bool ChunkFeed::fill() {
  return slots_->fill();
}
bool ChunkFeed::fillable() {
  return slots_->fillable();
}
void ChunkFeed::on_slot_freed(std::function<void()> hook) {
  slots_->slot_freed = std::move(hook);
}
void ChunkFeed::stop() {
  slots_->stop();
}
std::uint64_t ChunkFeed::bytes_read() const {
  return slots_->offset;  // the filler's own: read on the filler's thread
}

// Chunks are decodable alone (docs/trace-format.md): `decoders` worker
// threads decompress and decode the next chunks into DecodedChunks while the
// calling thread replays the oldest one into the visitor, checking table
// references in file order. At most decoders + 1 chunks are in flight, each
// buffering at most max_buffered_events events (a larger chunk is decoded
// again by the calling thread when its turn comes), so memory stays bounded
// by a few decoded chunks, and the visitor sees exactly what read() would
// show it, errors included.
ReadResult TraceReader::read_parallel(TraceVisitor& visitor, unsigned decoders,
                                      std::size_t max_buffered_events) {
  if (decoders == 0) return read(visitor);
  max_buffered_events = std::max<std::size_t>(max_buffered_events, 1);
  ReadResult r;
  Impl& m = *impl_;
  if (!m.start(visitor, r)) return r;

  struct Job {
    Frame frame;
    DecodedChunk chunk;
    bool done = false;  // under mu
  };
  std::mutex mu;
  std::condition_variable work_cv, done_cv;
  std::deque<Job*> todo;  // under mu
  bool quit = false;      // under mu
  std::atomic<bool> abort{false};
  const std::uint64_t time_resolution = m.header.time_resolution_ns;

  auto worker = [&] {
    ChunkDecoder d;
    for (;;) {
      Job* j;
      {
        std::unique_lock lock(mu);
        work_cv.wait(lock, [&] { return quit || !todo.empty(); });
        if (quit) return;
        j = todo.front();
        todo.pop_front();
      }
      j->chunk.clear();
      // Every event takes at least two payload bytes (op and mask). Reserving
      // a power of two up front, kept from chunk to chunk, stops the buffer
      // from regrowing (and faulting fresh pages) for every chunk.
      j->chunk.events.reserve(std::bit_ceil(
          std::min<std::uint64_t>({j->frame.count, j->frame.raw / 2, max_buffered_events})));
      try {
        d.decompress(j->frame);
        BufferSink sink{j->chunk, abort, max_buffered_events, {}};
        // Stopped early without an abort: the chunk holds more events than a
        // buffer may (a hostile file can pack 2^25 into one chunk).
        if (!d.decode(j->frame, time_resolution, sink)) j->chunk.overflow = true;
      } catch (const DecodeError& e) {
        j->chunk.error = e.what;
      }
      {
        std::lock_guard lock(mu);
        j->done = true;
      }
      done_cv.notify_one();
    }
  };
  // Declared before the joiner: the workers may still be decoding them when
  // a return path unwinds, so they must outlive the join.
  std::deque<std::unique_ptr<Job>> in_flight;  // file order
  std::vector<std::unique_ptr<Job>> spare;     // recycled with their buffers
  std::vector<std::thread> threads;
  struct Joiner {  // stops and joins the workers on every return path
    std::vector<std::thread>& threads;
    std::mutex& mu;
    bool& quit;
    std::atomic<bool>& abort;
    std::condition_variable& cv;
    ~Joiner() {
      abort = true;
      {
        std::lock_guard lock(mu);
        quit = true;
      }
      cv.notify_all();
      for (auto& t : threads) t.join();
    }
  } joiner{threads, mu, quit, abort, work_cv};
  for (unsigned i = 0; i < decoders; ++i) threads.emplace_back(worker);

  DirectSink sink{m.ids, visitor, r};
  struct Flusher {  // the buffered events go out on every return path
    DirectSink& sink;
    ~Flusher() { sink.flush(); }
  } flusher{sink};
  std::uint64_t offset = m.data_offset;
  FrameKind last = FrameKind::data;
  Frame end_frame;
  ReadResult stop;
  for (;;) {
    while (last == FrameKind::data && in_flight.size() < decoders + 1) {
      std::unique_ptr<Job> j;
      if (spare.empty()) {
        j = std::make_unique<Job>();
      } else {
        j = std::move(spare.back());
        spare.pop_back();
      }
      last = m.next_frame(offset, j->frame, stop);
      if (last != FrameKind::data) {
        end_frame = std::move(j->frame);
        break;
      }
      j->done = false;
      {
        std::lock_guard lock(mu);
        todo.push_back(j.get());
      }
      work_cv.notify_one();
      in_flight.push_back(std::move(j));
    }
    if (in_flight.empty()) break;
    Job& j = *in_flight.front();
    {
      std::unique_lock lock(mu);
      done_cv.wait(lock, [&] { return j.done; });
    }
    try {
      bool more;
      if (j.chunk.overflow) {  // decoded here, straight into the visitor
        m.decoder.decompress(j.frame);
        more = m.decoder.decode(j.frame, time_resolution, sink);
      } else {
        more = replay(j.chunk, sink);
      }
      if (!more) {
        r.ok = true;  // the visitor stopped reading inside this chunk
        return r;
      }
      ++r.chunks;
    } catch (const DecodeError& e) {
      r.error = m.path + ": " + e.what + m.at(j.frame.offset);
      return r;
    }
    spare.push_back(std::move(in_flight.front()));
    in_flight.pop_front();
  }
  switch (last) {
    case FrameKind::end:
      m.end_of_trace(r, end_frame, offset);
      break;
    case FrameKind::stop:
      take_stop(r, stop);
      break;
    default:
      r.ok = true;
      break;
  }
  return r;
}

}  // namespace memtrail
