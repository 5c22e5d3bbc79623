// The chunk decoder stage of the read pipeline: a checked frame's payload,
// decompressed, decoded into a sink (table_check.hpp's DirectSink, or the
// parallel read's BufferSink) with the codec's prediction model
// (codec/thread_model.hpp). One per thread; its buffers and per-thread
// model states keep their capacity from chunk to chunk. Templated on the
// sink so the per-event calls inline: this is report's hot loop.
#pragma once

#include <zstd.h>

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "assert_levels.hpp"
#include "byte_io.hpp"
#include "codec/thread_model.hpp"
#include "format_layout.hpp"
#include "memtrail/trace_file.hpp"
#include "model_scan.hpp"
#include "reader/decode_error.hpp"
#include "reader/frame_source.hpp"
#include "record_layout.hpp"

namespace memtrail::reader {

using namespace format;

// The payload of `f`, decompressed into `out`. Throws DecodeError.
inline void decompress_into(ZSTD_DCtx* dctx, const Frame& f, std::string& out) {
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

 private:
  struct Cursor;  // one chunk's streams and position
  void split_streams(const Frame& f, ByteSource (&s)[kStreamCount]) const;
  void begin_chunk();
  template <class Sink>
  void read_record(ByteSource& ops, std::uint8_t tag, Cursor& c, Sink& sink);
  template <class Sink>
  void decode_event(std::uint8_t op, Cursor& c, Sink& sink);
  void event_history(std::uint8_t op, std::uint8_t mask, Cursor& c, Event& e);
  void event_size(std::uint8_t mask, bool has_ref, std::uint64_t ref_size, Cursor& c, Event& e,
                  int& slot);
  void event_address(std::uint8_t op, std::uint8_t mask, Cursor& c, Event& e);
  template <class Sink>
  void check_aux_range(const Event& e, Sink& sink);
  static void finish_chunk(const Frame& f, const ByteSource (&s)[kStreamCount],
                           std::uint64_t events);
};

// One chunk's byte streams and where the decoder stands in them.
struct ChunkDecoder::Cursor {
  ByteSource (&s)[kStreamCount];
  std::uint64_t time_resolution;
  // Events numbered (from 1) below this keep the address model up; later
  // ones feed no candidate-coded alloc (model_scan.hpp).
  std::uint64_t model_events;
  std::uint32_t thread = 0;
  DecoderThreadState* state = nullptr;  // of `thread`; null after a switch
  std::uint64_t events = 0;             // decoded so far
  std::uint32_t last_node = 0;          // the previous stack node id (kTagStackNodeDelta)
};

inline void ChunkDecoder::split_streams(const Frame& f, ByteSource (&s)[kStreamCount]) const {
  ByteSource whole(payload.data(), f.raw);
  std::uint64_t lengths[kStreamCount];
  for (auto& n : lengths)
    if (!whole.varint(n)) throw DecodeError{"undecodable stream table"};
  for (int i = 0; i < kStreamCount; ++i)
    if (!whole.take(lengths[i], s[i])) throw DecodeError{"stream lengths exceed the chunk"};
  if (!whole.empty()) throw DecodeError{"trailing bytes after the streams"};
}

inline void ChunkDecoder::begin_chunk() {
  state_of_thread.clear();  // prediction state is per chunk
  recent_state[0] = recent_state[1] = nullptr;
  // ~50 KiB each: keep enough for ordinary chunks, not a hostile chunk's 1024.
  if (states.size() > kKeptThreadStates) states.resize(kKeptThreadStates);
  ordinals.clear();
}

inline void ChunkDecoder::finish_chunk(const Frame& f, const ByteSource (&s)[kStreamCount],
                                       std::uint64_t events) {
  for (int i = 1; i < kStreamCount; ++i)
    if (!s[i].empty()) throw DecodeError{"unused bytes in a value stream"};
  if (events != f.count)
    throw DecodeError{"chunk declares " + std::to_string(f.count) + " events but holds " +
                      std::to_string(events)};
}

template <class Sink>
bool ChunkDecoder::decode(const Frame& f, std::uint64_t time_resolution, Sink& sink) {
  MEMTRAIL_ASSERT(payload.size() >= f.raw);
  ByteSource s[kStreamCount];
  split_streams(f, s);
  begin_chunk();
  Cursor c{s, time_resolution, events_needing_model(s[kOps])};
  ByteSource& ops = s[kOps];
  while (!ops.empty()) {
    std::uint8_t op;
    ops.u8(op);
    if (op & kRecordBit) {
      read_record(ops, op & ~kRecordBit, c, sink);
      if (!sink.keep_going()) return false;
      continue;
    }
    decode_event(op, c, sink);
    ++c.events;
    if (!sink.commit()) return false;
  }
  finish_chunk(f, s, c.events);
  MEMTRAIL_ASSERT_INTERNAL(state_of_thread.size() <= kMaxThreadsPerChunk);
  return true;
}

// A pool record, its values range-checked.
inline PoolInfo read_pool_record(ByteSource& ops) {
  PoolInfo p;
  std::string_view name;
  std::uint8_t kind = 0, space = 0;
  std::int64_t device = 0;
  need(read_record_fields<kTagPool>(ops, p.id, p.parent, name, kind, space, device), "pool record");
  if (p.id == 0) throw DecodeError{"pool record with id 0"};
  need(kind <= static_cast<std::uint8_t>(PoolKind::other) &&
           space <= static_cast<std::uint8_t>(MemorySpace::mmap) && device >= INT32_MIN &&
           device <= INT32_MAX,
       "pool record (value out of range)");
  p.name = name;
  p.kind = static_cast<PoolKind>(kind);
  p.space = static_cast<MemorySpace>(space);
  p.device = static_cast<std::int32_t>(device);
  return p;
}

// A table record, after its op byte: read (record_layout.hpp gives its
// fields), checked alone, handed to the sink.
template <class Sink>
void ChunkDecoder::read_record(ByteSource& ops, std::uint8_t tag, Cursor& c, Sink& sink) {
  auto table_id = [&](std::uint32_t id, const char* what) {
    if (id == 0) throw DecodeError{std::string(what) + " record with id 0"};
  };
  std::string_view text;
  switch (tag) {
    case kTagString: {
      std::uint32_t id;
      need(read_record_fields<kTagString>(ops, id, text), "string record");
      table_id(id, "string");
      sink.string(id, text);
      break;
    }
    case kTagModule: {
      ModuleInfo m;
      std::string_view build_id;
      need(
          read_record_fields<kTagModule>(ops, m.id, text, m.load_address, m.start, m.end, build_id),
          "module record");
      table_id(m.id, "module");
      m.path = text;
      m.build_id = build_id;
      sink.module(m);
      break;
    }
    case kTagThread: {
      ThreadInfo t;
      need(read_record_fields<kTagThread>(ops, t.id, t.tid, text), "thread record");
      table_id(t.id, "thread");
      t.name = text;
      sink.thread(t);
      break;
    }
    case kTagPool:
      sink.pool(read_pool_record(ops));
      break;
    case kTagStackNode: {
      StackNode n;
      need(read_record_fields<kTagStackNode>(ops, n.id, n.parent, n.ip), "stack node record");
      table_id(n.id, "stack node");
      c.last_node = n.id;
      sink.stack_node(n);
      break;
    }
    case kTagStackNodeDelta: {
      StackNode n;
      std::uint32_t id_step = 0, parent_back = 0;
      need(read_record_fields<kTagStackNodeDelta>(ops, id_step, parent_back, n.ip),
           "stack node record");
      n.id = c.last_node + id_step;  // mod 2^32, as written
      n.parent = n.id - parent_back;
      table_id(n.id, "stack node");
      c.last_node = n.id;
      sink.stack_node(n);
      break;
    }
    case kTagScope: {
      ScopeInfo sc;
      std::uint8_t kind = 0;
      need(read_record_fields<kTagScope>(ops, sc.id, text, kind, sc.pool), "scope record");
      table_id(sc.id, "scope");
      need(kind <= static_cast<std::uint8_t>(ScopeKind::iteration),
           "scope record (kind out of range)");
      sc.name = text;
      sc.kind = static_cast<ScopeKind>(kind);
      sink.scope(sc);
      break;
    }
    case kTagThreadSwitch:
      need(read_record_fields<kTagThreadSwitch>(ops, c.thread), "thread switch");
      c.state = nullptr;
      sink.thread_switch(c.thread);
      break;
    default:
      throw DecodeError{"unknown record tag " + std::to_string(tag)};
  }
}

// One event, decoded in place into the sink's slot (the visitor's buffer
// when it has one), field by field in stream order.
template <class Sink>
[[gnu::always_inline]] inline void ChunkDecoder::decode_event(std::uint8_t op, Cursor& c,
                                                              Sink& sink) {
  std::uint8_t kind_index = op & kOpKindMask;
  if (kind_index == 0 || kind_index >= kEventKindCount)
    throw DecodeError{"unknown event kind " + std::to_string(kind_index)};
  std::uint8_t mask = 0;
  need(c.s[kOps].u8(mask), "event field mask");
  Event& e = sink.slot();
  e.address = 0;
  e.size = 0;
  e.aux = 0;
  e.kind = static_cast<EventKind>(kind_index);
  e.thread = c.thread;
  if (!c.state) c.state = &state_for(c.thread);  // once per thread switch
  MEMTRAIL_ASSERT_INTERNAL(state_of_thread.count(c.thread) == 1);
  event_history(op, mask, c, e);
  event_address(op, mask, c, e);
  sink.event_refs(e);
  check_aux_range(e, sink);
}

// Time, pool, stack, detail and aux: deltas from, or repeats of, the
// thread's previous event (of the same kind, for stack and detail).
[[gnu::always_inline]] inline void ChunkDecoder::event_history(std::uint8_t op, std::uint8_t mask,
                                                               Cursor& c, Event& e) {
  DecoderThreadState& st = *c.state;
  ByteSource& misc = c.s[kMisc];
  const int kind = static_cast<int>(e.kind);
  std::uint64_t dt = 0;
  need(split_varint(c.s[kTime], c.s[kTimeHigh], dt), "event time");
  std::uint64_t units = (op & kOpTimeBack) ? st.last_time - dt : st.last_time + dt;
  e.time_ns = units * c.time_resolution;
  st.last_time = units;
  e.pool = st.last_pool;
  e.stack = st.last_stack[kind];
  e.detail = st.last_detail[kind];
  if (mask & kMaskPool) need(misc.varint32(e.pool), "event pool");
  if (mask & kMaskStack) {
    std::uint64_t code;
    need(misc.varint(code) && st.stack_of_code(kind, code, e.stack), "event stack");
  }
  if (mask & kMaskDetail) need(misc.u8(e.detail), "event detail");
  if (mask & kMaskAux) need(misc.varint(e.aux), "event aux");
}

// Size and requested size: zero, a slot of the size cache (`slot`), an
// explicit value (inserted into the cache) or the referenced block's.
[[gnu::always_inline]] inline void ChunkDecoder::event_size(std::uint8_t mask, bool has_ref,
                                                            std::uint64_t ref_size, Cursor& c,
                                                            Event& e, int& slot) {
  DecoderThreadState& st = *c.state;
  switch (static_cast<SizeMode>((mask >> kMaskSizeShift) & 3)) {
    case kSizeZero:
      break;
    case kSizeCached: {
      std::uint8_t i = 0;
      need(c.s[kSize].u8(i) && i < kSizeSlots, "event size slot");
      slot = i;
      e.size = st.slot_size[slot];
      break;
    }
    case kSizeExplicit:
      need(split_varint(c.s[kSize], c.s[kSizeHigh], e.size), "event size");
      slot = st.insert_size(e.size);
      break;
    case kSizeOfRef:
      if (!has_ref || e.kind != EventKind::free)
        throw DecodeError{"size refers to a block without an address reference"};
      e.size = ref_size;
      break;
  }
  e.requested = default_requested(e.kind, e.size);
  if (mask & kMaskRequested) {
    std::int64_t diff = 0;
    need(c.s[kSize].svarint(diff), "event requested size");
    e.requested = e.size - static_cast<std::uint64_t>(diff);
  }
}

// Address (and size, which an address may be predicted from): a free's
// reference back to its alloc in this chunk, an alloc's candidate of the
// glibc model, or a delta from the predicted address. Then the model
// learns the event.
[[gnu::always_inline]] inline void ChunkDecoder::event_address(std::uint8_t op, std::uint8_t mask,
                                                               Cursor& c, Event& e) {
  DecoderThreadState& st = *c.state;
  std::uint64_t ref_size = 0;
  int slot = -1;
  const bool has_ref = op & kOpAddrRef;
  const bool is_free = e.kind == EventKind::free;
  const bool alloc = is_alloc_kind(e.kind);
  if (has_ref) {
    if (mask & kMaskAddr) throw DecodeError{"event with two addresses"};
    if (!is_free && !alloc)
      throw DecodeError{"address reference on a " + std::string(to_string(e.kind)) + " event"};
  }
  if (has_ref && is_free) {
    std::uint64_t d;
    need(c.s[kAddr].varint(d), "event address reference");
    if (d == 0 || d > ordinals.size())
      throw DecodeError{"address reference " + std::to_string(d) + " out of range"};
    std::tie(e.address, ref_size) = ordinals[ordinals.size() - d];
  }
  event_size(mask, has_ref, ref_size, c, e, slot);
  const bool model = c.events + 1 < c.model_events;
  std::uint64_t cls = 0;
  int bucket = 0;  // of cls: computed once for both questions below
  if (alloc && (has_ref || model)) {
    cls = chunk_class(e.size);
    bucket = codec::ClassFrees::bucket_of(cls);
  }
  if (has_ref && alloc) {
    std::uint64_t d;
    need(c.s[kAddr].varint(d), "event address reference");
    if (!st.alloc_address_at(bucket, cls, d, e.address))
      throw DecodeError{"address candidate " + std::to_string(d) + " out of range"};
  }
  if (!has_ref && (mask & kMaskAddr)) {
    std::uint64_t zz = 0;
    need(split_varint(c.s[kAddr], c.s[kAddrHigh], zz), "event address");
    std::uint64_t predicted = slot >= 0 ? st.slot_address[slot] : st.last_address;
    e.address = predicted + static_cast<std::uint64_t>(unzigzag(zz));
  }
  st.last_pool = e.pool;
  st.set_stack(static_cast<int>(e.kind), e.stack);
  st.last_detail[static_cast<int>(e.kind)] = e.detail;
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
  MEMTRAIL_ASSERT_INTERNAL(ordinals.size() <= c.events + 1);
}

// An aux value names a scope or string id, which are 32 bits.
template <class Sink>
[[gnu::always_inline]] inline void ChunkDecoder::check_aux_range(const Event& e, Sink& sink) {
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
}

}  // namespace memtrail::reader
