// TraceReader: streams a .mtr file chunk by chunk. Memory is bounded by one
// chunk (its payload plus its alloc-ordinal table) and the sets of defined
// table ids. Every malformed input ends in a one-line error naming the byte
// offset of the chunk; a file cut mid-chunk reads up to its last whole chunk.
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "byte_io.hpp"
#include "format_layout.hpp"
#include "memtrail/trace_file.hpp"

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
    if (id < kDenseIds) {
      std::size_t w = id >> 6;
      return w < bits_.size() && ((bits_[w] >> (id & 63)) & 1);
    }
    return sparse_.count(id) != 0;
  }
  void insert(std::uint32_t id) {
    if (id >= kDenseIds) {
      sparse_.insert(id);
      return;
    }
    std::size_t w = id >> 6;
    if (w >= bits_.size()) bits_.resize(std::max<std::size_t>(w + 1, bits_.size() * 2), 0);
    bits_[w] |= std::uint64_t{1} << (id & 63);
  }
  void clear() {
    bits_.clear();
    sparse_.clear();
  }

 private:
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

}  // namespace

struct TraceReader::Impl {
  std::string path;
  std::unique_ptr<std::FILE, FileCloser> file;
  std::uint64_t file_size = 0;
  std::uint64_t data_offset = 0;  // first chunk
  std::string header_error;
  TraceHeader header;

  // Defined table ids (file-wide).
  IdSet strings, modules, threads, pools, stack_nodes, scopes;

  std::string stored, payload;
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  ~Impl() { ZSTD_freeDCtx(dctx); }

  void read_header();
  bool decode_chunk(const char* data, std::size_t size, std::uint32_t declared_events,
                    TraceVisitor& v, ReadResult& r);
};

void TraceReader::Impl::read_header() {
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

bool TraceReader::Impl::decode_chunk(const char* data, std::size_t size,
                                     std::uint32_t declared_events, TraceVisitor& v,
                                     ReadResult& r) {
  ByteSource whole(data, size);
  ByteSource s[kStreamCount];
  std::uint64_t lengths[kStreamCount];
  for (auto& n : lengths)
    if (!whole.varint(n)) throw DecodeError{"undecodable stream table"};
  for (int i = 0; i < kStreamCount; ++i)
    if (!whole.take(lengths[i], s[i])) throw DecodeError{"stream lengths exceed the chunk"};
  if (!whole.empty()) throw DecodeError{"trailing bytes after the streams"};

  ByteSource& ops = s[kOps];
  const std::uint64_t time_resolution = header.time_resolution_ns;
  std::uint32_t current_thread = 0;
  std::unordered_map<std::uint32_t, ThreadCodecState> states;
  ThreadCodecState* current_state = nullptr;  // of current_thread; null after a switch
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ordinals;  // alloc (address, size)
  std::uint64_t chunk_events = 0;

  auto need = [](bool ok, const char* what) {
    if (!ok) throw DecodeError{std::string("undecodable ") + what};
  };
  // Inlined per event; only the error path is out of line.
  auto defined = [](const IdSet& set, std::uint32_t id, const char* table) {
    if (id != 0 && !set.contains(id)) [[unlikely]]
      undefined_reference(table, id);
  };
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
          strings.insert(id);
          v.on_string(id, text);
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
          modules.insert(m.id);
          v.on_module(m);
          break;
        }
        case kTagThread: {
          ThreadInfo t;
          table_id(t.id, "thread");
          need(ops.varint(t.tid) && ops.str(text), "thread record");
          t.name = text;
          threads.insert(t.id);
          v.on_thread(t);
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
          defined(pools, p.parent, "pool");
          p.name = text;
          p.kind = static_cast<PoolKind>(kind);
          p.space = static_cast<MemorySpace>(space);
          p.device = static_cast<std::int32_t>(device);
          pools.insert(p.id);
          v.on_pool(p);
          break;
        }
        case kTagStackNode: {
          StackNode n;
          table_id(n.id, "stack node");
          need(ops.varint32(n.parent) && ops.varint(n.ip), "stack node record");
          defined(stack_nodes, n.parent, "stack node");
          stack_nodes.insert(n.id);
          v.on_stack_node(n);
          break;
        }
        case kTagScope: {
          ScopeInfo sc;
          std::uint8_t kind = 0;
          table_id(sc.id, "scope");
          need(ops.str(text) && ops.u8(kind) && ops.varint32(sc.pool), "scope record");
          need(kind <= static_cast<std::uint8_t>(ScopeKind::iteration),
               "scope record (kind out of range)");
          defined(pools, sc.pool, "pool");
          sc.name = text;
          sc.kind = static_cast<ScopeKind>(kind);
          scopes.insert(sc.id);
          v.on_scope(sc);
          break;
        }
        case kTagThreadSwitch:
          need(ops.varint32(current_thread), "thread switch");
          current_state = nullptr;
          defined(threads, current_thread, "thread");
          break;
        default:
          throw DecodeError{"unknown record tag " + std::to_string(op & ~kRecordBit)};
      }
      if (!v.keep_going()) return false;
      continue;
    }

    // An event.
    std::uint8_t kind_index = op & kOpKindMask;
    if (kind_index == 0 || kind_index >= kEventKindCount)
      throw DecodeError{"unknown event kind " + std::to_string(kind_index)};
    std::uint8_t mask;
    need(ops.u8(mask), "event field mask");
    Event e;
    e.kind = static_cast<EventKind>(kind_index);
    e.thread = current_thread;
    if (!current_state) {  // looked up once per thread switch, not per event
      auto found = states.find(current_thread);
      if (found == states.end()) {
        if (states.size() >= kMaxThreadsPerChunk)
          throw DecodeError{"more than " + std::to_string(kMaxThreadsPerChunk) +
                            " threads with events in one chunk"};
        found = states.try_emplace(current_thread).first;
      }
      current_state = &found->second;
    }
    ThreadCodecState& st = *current_state;

    std::uint64_t dt;
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
      std::int64_t diff;
      need(s[kSize].svarint(diff), "event requested size");
      e.requested = e.size - static_cast<std::uint64_t>(diff);
    }
    std::uint64_t cls = alloc ? chunk_class(e.size) : 0;
    if (has_ref && alloc) {
      std::uint64_t d;
      need(s[kAddr].varint(d), "event address reference");
      if (!AllocCandidates(st, cls).address_at(d, e.address))
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
    if (is_free && e.address != 0) st.push_freed(e.address, e.size != 0 ? e.size : ref_size);
    if (alloc) {
      if (e.address != 0) {
        st.take_freed(cls, e.address);
        st.push_fresh(e.address + cls);
      }
      ordinals.emplace_back(e.address, e.size);
    }

    defined(pools, e.pool, "pool");
    defined(stack_nodes, e.stack, "stack node");
    switch (e.kind) {
      case EventKind::scope_begin:
      case EventKind::scope_end:
      case EventKind::workspace_reset:
      case EventKind::workspace_learn:
      case EventKind::spill:
      case EventKind::donate:
        if (e.aux > 0xffffffffu) throw DecodeError{"scope id out of range"};
        defined(scopes, static_cast<std::uint32_t>(e.aux), "scope");
        break;
      case EventKind::mark:
      case EventKind::donate_rejected:
      case EventKind::oom:
        if (e.aux > 0xffffffffu) throw DecodeError{"string id out of range"};
        defined(strings, static_cast<std::uint32_t>(e.aux), "string");
        break;
      default:
        break;
    }
    ++chunk_events;
    ++r.events;
    v.on_event(e);
    if (!v.keep_going()) return false;
  }
  for (int i = 1; i < kStreamCount; ++i)
    if (!s[i].empty()) throw DecodeError{"unused bytes in a value stream"};
  if (chunk_events != declared_events)
    throw DecodeError{"chunk declares " + std::to_string(declared_events) + " events but holds " +
                      std::to_string(chunk_events)};
  return true;
}

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

ReadResult TraceReader::read(TraceVisitor& visitor) {
  ReadResult r;
  Impl& m = *impl_;
  if (!m.header_error.empty()) {
    r.error = m.header_error;
    return r;
  }
  visitor.on_header(m.header);
  m.strings.clear();
  m.modules.clear();
  m.threads.clear();
  m.pools.clear();
  m.stack_nodes.clear();
  m.scopes.clear();
  std::FILE* f = m.file.get();
  std::uint64_t offset = m.data_offset;
  if (std::fseek(f, static_cast<long>(offset), SEEK_SET) != 0) {
    r.error = m.path + ": cannot seek to byte " + std::to_string(offset);
    return r;
  }
  auto at = [&](std::uint64_t off) { return " in chunk at byte " + std::to_string(off); };
  auto cut = [&](std::uint64_t off) {
    r.ok = true;
    r.dropped_bytes = m.file_size - off;
    r.warning = m.path + ": " + std::to_string(r.dropped_bytes) +
                " bytes after the last whole chunk were dropped";
    return r;
  };
  if (!visitor.keep_going()) {
    r.ok = true;
    return r;
  }
  while (offset < m.file_size) {
    unsigned char fh[kFrameHeaderBytes];
    if (m.file_size - offset < kFrameHeaderBytes) return cut(offset);
    if (std::fread(fh, 1, sizeof fh, f) != sizeof fh) {
      r.error = m.path + ": read error" + at(offset);
      return r;
    }
    ByteSource h(reinterpret_cast<const char*>(fh), sizeof fh);
    std::uint64_t type, stored, raw, count, hcrc;
    h.fixed(type, 1);
    h.fixed(stored, 4);
    h.fixed(raw, 4);
    h.fixed(count, 4);
    h.fixed(hcrc, 4);
    if (hcrc != crc32_of(fh, 13)) {
      r.error = m.path + ": checksum mismatch" + at(offset) + " (frame header)";
      return r;
    }
    if (type != kChunkData && type != kChunkEnd) {
      r.error = m.path + ": unknown chunk type " + std::to_string(type) + at(offset);
      return r;
    }
    if (raw > kMaxRawChunk || stored > ZSTD_compressBound(raw) ||
        (type == kChunkEnd && (stored != 0 || raw != 0))) {
      r.error = m.path + ": implausible chunk size (" + std::to_string(stored) + " stored, " +
                std::to_string(raw) + " raw)" + at(offset);
      return r;
    }
    if (m.file_size - offset < kFrameHeaderBytes + stored + kFrameTrailerBytes) return cut(offset);
    m.stored.resize(stored + kFrameTrailerBytes);
    if (std::fread(m.stored.data(), 1, m.stored.size(), f) != m.stored.size()) {
      r.error = m.path + ": read error" + at(offset);
      return r;
    }
    ByteSource t(m.stored.data() + stored, kFrameTrailerBytes);
    std::uint64_t pcrc;
    t.fixed(pcrc, 4);
    if (pcrc != crc32_of(m.stored.data(), stored)) {
      r.error = m.path + ": checksum mismatch" + at(offset);
      return r;
    }
    std::uint64_t chunk_offset = offset;
    offset += kFrameHeaderBytes + stored + kFrameTrailerBytes;
    if (type == kChunkEnd) {
      r.complete = true;
      if (count != 0xffffffffu && count != r.events) {
        r.error = m.path + ": end marker counts " + std::to_string(count) + " events but " +
                  std::to_string(r.events) + " were read" + at(chunk_offset);
        return r;
      }
      if (offset < m.file_size)
        r.warning = m.path + ": " + std::to_string(m.file_size - offset) +
                    " bytes after the end-of-trace marker were ignored";
      r.ok = true;
      return r;
    }
    // The frame must declare exactly R bytes before R bytes are allocated.
    if (ZSTD_getFrameContentSize(m.stored.data(), stored) != raw) {
      r.error = m.path + ": undecodable chunk (zstd frame does not declare " + std::to_string(raw) +
                " bytes)" + at(chunk_offset);
      return r;
    }
    m.payload.resize(raw);
    std::size_t n = ZSTD_decompressDCtx(m.dctx, m.payload.data(), raw, m.stored.data(), stored);
    if (ZSTD_isError(n) || n != raw) {
      r.error = m.path + ": undecodable chunk (zstd: " +
                (ZSTD_isError(n) ? std::string(ZSTD_getErrorName(n)) : "size mismatch") + ")" +
                at(chunk_offset);
      return r;
    }
    try {
      bool more =
          m.decode_chunk(m.payload.data(), raw, static_cast<std::uint32_t>(count), visitor, r);
      if (!more) {  // the visitor stopped reading inside this chunk
        r.ok = true;
        return r;
      }
      ++r.chunks;
    } catch (const DecodeError& e) {
      r.error = m.path + ": " + e.what + at(chunk_offset);
      return r;
    }
  }
  r.ok = true;
  return r;
}

}  // namespace memtrail
