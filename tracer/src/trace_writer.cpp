// TraceWriter: encodes records and events into the five streams of the
// current chunk, then compresses and frames the chunk with one write(2).
// All prediction state is per chunk, so every chunk decodes on its own.
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <zlib.h>
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_customMem
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "byte_io.hpp"
#include "codec/thread_model.hpp"
#include "exact_divider.hpp"
#include "format_layout.hpp"
#include "memtrail/detail/address_table.hpp"
#include "memtrail/trace_file.hpp"
#include "private_fd.hpp"
#include "record_layout.hpp"

namespace memtrail {

namespace {

// write(2) past RLIMIT_FSIZE raises SIGXFSZ, whose default action kills the
// process: a traced program that lowers its file size limit (its own files
// are small) died of the trace's size (issue 26 item 5). With the signal
// blocked the write fails with EFBIG instead, and tracing stops with the
// reason on stderr; the signal, sent to this thread, is taken back before
// the mask is restored. A program that blocks SIGXFSZ itself keeps it.
ssize_t write_under_file_size_limit(int fd, const void* data, std::size_t size) {
  sigset_t xfsz, old;
  sigemptyset(&xfsz);
  sigaddset(&xfsz, SIGXFSZ);
  pthread_sigmask(SIG_BLOCK, &xfsz, &old);
  ssize_t n = ::write(fd, data, size);
  int saved = errno;
  if (n < 0 && saved == EFBIG && !sigismember(&old, SIGXFSZ)) {
    timespec none{0, 0};
    while (sigtimedwait(&xfsz, nullptr, &none) == SIGXFSZ) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = saved;
  return n;
}

}  // namespace

using namespace format;

namespace {

std::uint32_t crc32_of(const void* data, std::size_t n, std::uint32_t crc = 0) {
  return static_cast<std::uint32_t>(
      ::crc32(crc, static_cast<const Bytef*>(data), static_cast<uInt>(n)));
}

// The chunk's blocks allocated and not yet freed, by (pool, address) ->
// (alloc ordinal, size): a free of one of them is coded as a reference. A
// free finds and removes its entry in one probe sequence.
struct PoolAddress {
  std::uint64_t address;
  std::uint32_t pool;
  bool operator==(const PoolAddress&) const = default;
};
[[maybe_unused]] std::uint64_t address_hash(const PoolAddress& k) {
  return detail::address_hash(k.address ^ (std::uint64_t{k.pool} << 47));
}

class LiveBlocks {
 public:
  // Enters (or replaces: its free was lost) the block at `address`.
  void put(std::uint32_t pool, std::uint64_t address, std::uint64_t ordinal, std::uint64_t size) {
    *table_.try_emplace({address, pool}).first = Block{ordinal, size};
  }
  // Removes the block, returning its ordinal and size; false when absent.
  bool take(std::uint32_t pool, std::uint64_t address, std::uint64_t& ordinal,
            std::uint64_t& size) {
    Block b;
    if (!table_.take({address, pool}, b)) return false;
    ordinal = b.ordinal;
    size = b.size;
    return true;
  }
  void clear() { table_.clear(); }
  void release() { table_ = {}; }

 private:
  struct Block {
    std::uint64_t ordinal, size;
  };
  detail::AddressTable<Block, PoolAddress> table_;
};

// One stream of the chunk being built. The encoder reserves room for a
// whole event once (reserve), then writes with plain stores: no capacity
// check and no size update per byte, as std::string::push_back has.
class OutBuf {
 public:
  OutBuf() = default;
  OutBuf(const OutBuf&) = delete;
  OutBuf& operator=(const OutBuf&) = delete;
  ~OutBuf() { std::free(begin_); }

  const char* data() const { return begin_; }
  std::size_t size() const { return static_cast<std::size_t>(pos_ - begin_); }
  std::string_view view() const { return {begin_, size()}; }
  void clear() { pos_ = begin_; }
  // Gives the memory back (the next write takes it again).
  void release() {
    std::free(begin_);
    begin_ = pos_ = end_ = nullptr;
  }
  // `n` bytes of room at the end, not initialised: a writer fills a prefix
  // and commits it. Pages it never writes are never touched.
  char* room(std::size_t n) {
    reserve(n);
    return pos_;
  }
  void commit(std::size_t n) { pos_ += n; }
  char* at(std::size_t offset) { return begin_ + offset; }
  void reserve(std::size_t n) {
    if (static_cast<std::size_t>(end_ - pos_) < n) grow(n);
  }
  void append(const char* p, std::size_t n) {
    reserve(n);
    if (n) std::memcpy(pos_, p, n);
    pos_ += n;
  }
  // Unchecked: the caller reserved the room.
  void u8(std::uint8_t v) { *pos_++ = static_cast<char>(v); }
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      *pos_++ = static_cast<char>(v | 0x80);
      v >>= 7;
    }
    *pos_++ = static_cast<char>(v);
  }

 private:
  void grow(std::size_t n) {
    std::size_t used = size();
    std::size_t cap = static_cast<std::size_t>(end_ - begin_);
    std::size_t want = std::max<std::size_t>({cap * 2, used + n, 4096});
    auto* p = static_cast<char*>(std::realloc(begin_, want));
    if (!p) throw std::bad_alloc();
    begin_ = p;
    pos_ = p + used;
    end_ = p + want;
  }
  char* begin_ = nullptr;
  char* pos_ = nullptr;
  char* end_ = nullptr;
};

// byte_io.hpp's split_varint, on OutBufs.
inline void split_varint(OutBuf& first, OutBuf& rest, std::uint64_t v) {
  if (v < 0x80) {
    first.u8(static_cast<std::uint8_t>(v));
    return;
  }
  first.u8(static_cast<std::uint8_t>(v | 0x80));
  rest.varint(v >> 7);
}

}  // namespace

namespace {
ZSTD_customMem g_codec_memory = ZSTD_defaultCMem;
}  // namespace

void detail::set_codec_memory(void* (*allocate)(void*, std::size_t),
                              void (*release)(void*, void*)) {
  g_codec_memory = ZSTD_customMem{allocate, release, nullptr};
}

struct TraceWriter::Impl {
  int fd = -1;
  // Opened by path: the file's identity, checked before every write (see
  // write_all), and the absolute path to reopen it by.
  detail::OwnFd own;
  bool by_path = false;
  std::string reopen_path;
  bool finished = false;
  std::uint64_t bytes = 0;
  std::uint64_t events = 0;
  std::uint64_t chunk_events = 0;
  // keep_space_free(): each chunk is written only while the file system
  // keeps its reserve free after it; once not, the rest are counted here.
  bool keep_space = false;
  bool out_of_space = false;
  std::uint64_t lost_for_space = 0;
  std::uint64_t space_reserve = 0;  // bytes, as last computed
  std::uint32_t max_string_id = 0;  // the lost mark's words take the next
  std::uint64_t last_time_ns = 0;   // of the last event added
  // on_chunk_written(): the caller's count is read as each chunk closes.
  void (*chunk_written)(void*, std::uint64_t) = nullptr;
  void* chunk_written_context = nullptr;
  const std::uint64_t* chunk_counter = nullptr;
  std::string path;
  ExactDivider time_resolution{1};  // event times are coded in these units

  OutBuf streams[kStreamCount];
  std::string payload, record_scratch;
  // The frame being written. A chunk's is built in place: zstd writes
  // straight after its header, into room not zeroed ahead to
  // ZSTD_compressBound (only the pages zstd writes are touched), and the
  // compressed bytes are not copied again.
  OutBuf frame;
  ZSTD_CCtx* cctx = ZSTD_createCCtx_advanced(g_codec_memory);

  // Chunk-local prediction state.
  std::uint32_t current_thread = 0;
  EncoderThreadState* current_state = nullptr;  // *threads[current_thread]
  // Every thread with an event in this chunk. A thread that ended
  // (TraceWriter::end_thread) keeps its entry, which still counts towards
  // kMaxThreadsPerChunk as the reader's does, but not its ~50 KiB of state:
  // a program that starts and ends threads by the thousand would otherwise
  // hold one per thread of the chunk (up to 1024: ~64 MiB of own heap, each
  // in a 64 KiB block).
  std::unordered_map<std::uint32_t, std::unique_ptr<EncoderThreadState>> threads;
  // threads[id] for small ids, so a thread switch (nearly every event when
  // threads interleave) costs one load, not a hash lookup.
  std::vector<EncoderThreadState*> state_by_id;
  // Ended threads' states, reset, for the next new threads: a fresh one is
  // ~50 KiB of zeros to write (5-8 % of the tracer's time under a program
  // that churns threads, at ~70 KiB), a reset one ~10 KiB. A few are kept.
  static constexpr std::size_t kSpareStates = 8;
  std::vector<std::unique_ptr<EncoderThreadState>> spare_states;
  std::unique_ptr<EncoderThreadState> new_state() {
    if (spare_states.empty()) return std::make_unique<EncoderThreadState>();
    std::unique_ptr<EncoderThreadState> state = std::move(spare_states.back());
    spare_states.pop_back();
    return state;
  }
  void give_back_state(std::unique_ptr<EncoderThreadState>& state) {
    if (spare_states.size() < kSpareStates) {
      state->reset();  // as fresh for the encoder: EndedThreads checks the bytes
      spare_states.push_back(std::move(state));
    }
    state.reset();
  }
  EncoderThreadState* cached_state(std::uint32_t id) const {
    return id < state_by_id.size() ? state_by_id[id] : nullptr;
  }
  void cache_state(std::uint32_t id, EncoderThreadState* st) {
    if (id >= 65536) return;
    if (id >= state_by_id.size()) state_by_id.resize(id + 1, nullptr);
    state_by_id[id] = st;
  }
  std::uint64_t ordinals = 0;  // alloc/reuse events in this chunk
  LiveBlocks live;
  std::uint32_t last_node = 0;  // the chunk's previous stack node id (kTagStackNodeDelta)
  // The file is in the recorder's writer thread's own descriptor table
  // (hand_over_to_private_table): no copy of it is the program's.
  bool private_table = false;
  // Names this chunk in TraceWriter::BlockRef; never 0, new at every flush.
  std::uint32_t chunk_serial = 1;
  // The glibc model (alloc candidates) in this chunk, and in the next ones.
  bool model = true, want_model = true;

  ~Impl() {
    forget_descriptor();
    ZSTD_freeCCtx(cctx);
  }
  // TraceWriter::release_scratch.
  void release_scratch() {
    if (raw_size() != 0) return;  // a chunk is being built in them
    for (auto& s : streams) s.release();
    reserved_events = 0;  // its room went with the streams
    frame.release();
    std::string().swap(payload);
    std::string().swap(record_scratch);
    ZSTD_freeCCtx(cctx);  // its workspace; compress_chunk makes a new one
    cctx = nullptr;
    live.release();
    spare_states.clear();
  }
  // The program's dup2 onto our number moves it (private_fd.hpp).
  void register_descriptor() {
    detail::register_private_fd(&fd);
    detail::register_private_fd(&own.fd);
  }
  void forget_descriptor() {
    detail::unregister_private_fd(&fd);
    detail::unregister_private_fd(&own.fd);
  }

  // Table records are rare: they are built with ByteSink in a scratch
  // string, then appended to OPS.
  ByteSink record_sink() {
    record_scratch.clear();
    return ByteSink{record_scratch};
  }
  void end_record() {
    streams[kOps].append(record_scratch.data(), record_scratch.size());
    reserved_events = 0;
  }

  void set_time_resolution(const TraceHeader& h) {
    if (h.time_resolution_ns == 0 || h.time_resolution_ns > kMaxTimeResolution)
      throw std::invalid_argument("TraceWriter: time resolution " +
                                  std::to_string(h.time_resolution_ns) +
                                  " ns is outside 1..1000000000");
    time_resolution = ExactDivider(h.time_resolution_ns);
  }

  std::size_t raw_size() const {
    std::size_t n = 0;
    for (auto& s : streams) n += s.size();
    return n;
  }

  // A program may close every descriptor (a daemon does) and open its own
  // files, which then get our number: never write into them. Before each
  // write the descriptor must still be the trace file; if it is not, the
  // file is reopened by its path for appending, provided it is still the
  // same file holding exactly what we wrote; else writing stops.
  void ensure_own_file() {
    if (!by_path || own.still_ours()) return;
    own.fd = -1;  // the number is no longer ours to write to or close
    fd = -1;
    int again = ::open(reopen_path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    struct stat st;
    bool same = again >= 0 && ::fstat(again, &st) == 0 && st.st_dev == own.dev &&
                st.st_ino == own.ino && static_cast<std::uint64_t>(st.st_size) == bytes;
    if (!same) {
      if (again >= 0) ::close(again);
      throw std::runtime_error(path +
                               ": the program closed the trace file's descriptor and the file "
                               "could not be reopened");
    }
    own.adopt(again);
    fd = own.fd;
  }

  // The file in the recorder's writer thread's own table (private_fd.hpp)
  // is written by that thread only. A program thread that drains while the
  // writer stands aside (drain_sharing.cpp) makes whole frames, which wait
  // in `pending`, in order, for the writer's next round (write_pending).
  bool has_writing_thread = false;
  pthread_t writing_thread{};
  std::string pending;
  bool owed_chunk_written = false;  // a pending chunk's chunk_written call
  // The caller's count when the last pending chunk closed: by the time the
  // writing thread writes it, the thread that flushed it has encoded more.
  std::uint64_t pending_counted = 0;
  bool off_thread() const {
    return has_writing_thread && !pthread_equal(pthread_self(), writing_thread);
  }

  void write_all(std::string_view data) {
    if (off_thread()) {
      pending += data;
      return;
    }
    if (!pending.empty()) write_pending();
    write_now(data);
  }

  void write_pending() {
    std::string waiting;
    waiting.swap(pending);  // emptied first: a failed write must not repeat it
    write_now(waiting);
    if (owed_chunk_written && chunk_written) chunk_written(chunk_written_context, pending_counted);
    owed_chunk_written = false;
  }

  void write_now(std::string_view data) {
    auto lock = detail::private_fd_lock();  // no move between the check and the writes
    ensure_own_file();
    const char* p = data.data();
    std::size_t left = data.size();
    while (left > 0) {
      ssize_t n = write_under_file_size_limit(fd, p, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw std::runtime_error(path + ": write failed: " + std::strerror(errno));
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    bytes += data.size();
  }

  void write_header(const TraceHeader& h) {
    std::string body;
    ByteSink b{body};
    b.fixed(h.pid, 4);
    b.fixed(h.ppid, 4);
    b.fixed(h.start_realtime_ns, 8);
    b.fixed(h.start_monotonic_ns, 8);
    b.fixed(h.clock_id, 4);
    for (const std::string* s : {&h.command_line, &h.executable, &h.hostname}) {
      std::string_view v = *s;
      if (v.size() > 65536) v = v.substr(0, 65536);  // keep the header bounded
      b.fixed(v.size(), 4);
      body.append(v);
    }
    b.fixed(h.time_resolution_ns, 4);
    std::string out(reinterpret_cast<const char*>(kMagic), sizeof kMagic);
    ByteSink o{out};
    o.fixed(kTraceFormatVersion, 2);
    o.fixed(0, 2);
    o.fixed(body.size(), 4);
    out += body;
    // The crc covers version, flags, length and payload: everything after the magic.
    o.fixed(crc32_of(out.data() + sizeof kMagic, out.size() - sizeof kMagic), 4);
    write_all(out);
  }

  // A frame: its header (type, stored and raw sizes, event count, the
  // header's crc), the stored bytes, their crc. begin_frame() leaves room
  // for the header; the stored bytes follow; end_frame() fills the header
  // in and appends the crc.
  static constexpr std::size_t kFrameHeader = 17;
  static void put_fixed(char* at, std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) at[i] = static_cast<char>(v >> (8 * i));
  }
  void begin_frame() {
    frame.clear();
    frame.room(kFrameHeader);
    frame.commit(kFrameHeader);
  }
  void end_frame(std::uint8_t type, std::uint32_t raw, std::uint32_t count) {
    const std::size_t stored = frame.size() - kFrameHeader;
    char* header = frame.at(0);
    header[0] = static_cast<char>(type);
    put_fixed(header + 1, stored, 4);
    put_fixed(header + 5, raw, 4);
    put_fixed(header + 9, count, 4);
    put_fixed(header + 13, crc32_of(header, 13), 4);
    const std::uint32_t crc = crc32_of(frame.at(kFrameHeader), stored);
    put_fixed(frame.room(4), crc, 4);
    frame.commit(4);
  }
  void write_frame(std::uint8_t type, std::string_view stored, std::uint32_t raw,
                   std::uint32_t count) {
    begin_frame();
    frame.append(stored.data(), stored.size());
    end_frame(type, raw, count);
    write_all(frame.view());
  }

  // The space a traced program needs on the trace's file system is unknown:
  // leave it 1/16 of the file system, at least 1 MiB (a small tmpfs) and at
  // most 64 MiB. Room also for the last chunk (the loss) and the end marker.
  static constexpr std::uint64_t kMinReserve = 1u << 20, kMaxReserve = 64u << 20;
  static constexpr std::size_t kFinalRoom = 4096;
  bool room_after(std::size_t chunk_bytes) {
    struct statvfs fs;
    struct stat st;
    // Unknown, or not a file on a sized file system (a pipe, /dev/full): as
    // before. Off the writing thread `fd` is not in the caller's table: by path.
    if (off_thread()) {
      if (reopen_path.empty() || ::statvfs(reopen_path.c_str(), &fs) != 0 || fs.f_blocks == 0)
        return true;
    } else if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
               ::fstatvfs(fd, &fs) != 0 || fs.f_blocks == 0) {
      return true;
    }
    std::uint64_t unit = fs.f_frsize ? fs.f_frsize : fs.f_bsize;
    std::uint64_t total = fs.f_blocks * unit, free = fs.f_bavail * unit;
    space_reserve = std::clamp<std::uint64_t>(total / 16, kMinReserve, kMaxReserve);
    return free >= chunk_bytes + kFinalRoom + space_reserve;
  }

  void flush_chunk() {
    if (raw_size() == 0) return;
    if (!out_of_space) {
      compress_chunk();
      if (keep_space && !room_after(frame.size())) out_of_space = true;
    }
    if (out_of_space) {  // dropped, counted: the trace stays readable up to its last chunk
      lost_for_space += chunk_events;
      events -= chunk_events;
    } else {
      // Every event the caller counted is in this chunk or an earlier one:
      // a chunk closes before an event is encoded (see add_event).
      const std::uint64_t counted = chunk_counter ? *chunk_counter : 0;
      write_all(frame.view());
      if (!pending.empty()) {
        owed_chunk_written = true;  // said once the writing thread wrote it
        pending_counted = counted;
      } else if (chunk_written) {
        chunk_written(chunk_written_context, counted);
      }
    }
    for (auto& s : streams) s.clear();
    chunk_events = 0;
    current_thread = 0;
    current_state = nullptr;
    for (auto& [id, state] : threads) cache_state(id, nullptr);
    threads.clear();
    ordinals = 0;
    last_node = 0;
    live.clear();
    if (++chunk_serial == 0) chunk_serial = 1;
    model = want_model;  // the chunk's state starts empty: either is consistent
  }

  void compress_chunk() {
    payload.clear();
    ByteSink p{payload};
    for (auto& s : streams) p.varint(s.size());
    for (auto& s : streams) payload.append(s.data(), s.size());
    if (!cctx && !(cctx = ZSTD_createCCtx_advanced(g_codec_memory))) throw std::bad_alloc();
    begin_frame();
    const std::size_t bound = ZSTD_compressBound(payload.size());
    std::size_t n = ZSTD_compressCCtx(cctx, frame.room(bound), bound, payload.data(),
                                      payload.size(), kZstdLevel);
    if (ZSTD_isError(n))
      throw std::runtime_error(path + ": zstd compression failed: " + ZSTD_getErrorName(n));
    frame.commit(n);
    end_frame(kChunkData, static_cast<std::uint32_t>(payload.size()),
              static_cast<std::uint32_t>(chunk_events));
  }

  // The most bytes one encode() adds to all streams together: a thread
  // switch (1 + 5), op and mask (2), the time (10), pool, stack code,
  // detail and aux (5 + 5 + 1 + 10), size and requested (10 + 10), the
  // address (10): 69, rounded up.
  static constexpr std::size_t kMaxEventTotalBytes = 80;
  // Events that may still be added before the chunk can reach
  // kTargetRawChunk: summing the eight stream sizes after every event cost
  // ~60 instructions an event; now it is done once per such stretch, and
  // the chunk still ends after exactly the same event.
  std::size_t unchecked_events = 0;
  void maybe_flush() {
    if (unchecked_events > 0) {
      --unchecked_events;
      return;
    }
    std::size_t n = raw_size();
    if (n >= target_raw_chunk()) {
      flush_chunk();
      n = raw_size();
    }
    unchecked_events =
        n < target_raw_chunk() ? (target_raw_chunk() - n - 1) / kMaxEventTotalBytes : 0;
  }
  // A chunk's memory in the writer is its streams, their copy for zstd and
  // the frame (~4.4 MiB own heap at kTargetRawChunk) beside a codec state
  // for each of its threads (~50 KiB). A chunk with this many threads ends
  // at half the raw size (cross-thread-64: the writer's large blocks 4.5 ->
  // 2.3 MiB, its trace 3.15 -> 3.54 B/event as each thread's model starts
  // afresh twice as often); a program with fewer threads keeps its chunks.
  static constexpr std::size_t kManyThreadsInChunk = 32;
  std::size_t target_raw_chunk() const {
    return threads.size() >= kManyThreadsInChunk ? kTargetRawChunk / 2 : kTargetRawChunk;
  }

  void record(RecordTag tag) {
    streams[kOps].reserve(1);
    streams[kOps].u8(kRecordBit | tag);
    reserved_events = 0;
    unchecked_events = 0;  // records have no size bound: check after this one
  }

  // Worst case bytes one event adds to any stream (thread switch, op, mask,
  // five varints in MISC, ...): reserved once per event, so the writes
  // below are plain stores.
  static constexpr std::size_t kMaxEventBytes = 40;
  // Room is reserved for this many events at a time; a table record uses
  // some of it, so it resets the count.
  static constexpr std::size_t kReserveEvents = 64;
  std::size_t reserved_events = 0;
  void reserve_event() {
    if (reserved_events == 0) {
      for (auto& s : streams) s.reserve(kMaxEventBytes * kReserveEvents);
      reserved_events = kReserveEvents;
    }
    --reserved_events;
  }

  // One event's code while encode() builds it: the op and mask bytes and the
  // values its steps pass on to the ones after.
  struct EventCode {
    std::uint8_t kind_index = 0;
    std::uint8_t op = 0;
    std::uint8_t mask = 0;
    bool alloc = false;
    std::uint64_t cls = 0;           // the alloc's size class (allocator model)
    std::uint64_t dt = 0;            // time delta, in resolution units
    std::uint64_t ref_distance = 0;  // kOpAddrRef: alloc ordinals back, or candidate index
    std::uint64_t ref_size = 0;      // the size of the block a free refers to
    SizeMode size_mode = kSizeExplicit;
    int slot = -1;  // the recent-size cache slot of the event's size
  };

  // `tracked`: the caller's BlockRef for this event's block (add_tracked_event),
  // which stands in for the chunk's table `live`; nullptr: use `live`.
  // Each step is inlined: this is the writer's per-event path.
  [[gnu::always_inline]] void encode(const Event& e, TraceWriter::BlockRef* tracked = nullptr,
                                     std::uint64_t tracked_size = 0) {
    EventCode c;
    c.kind_index = static_cast<std::uint8_t>(e.kind);
    if (c.kind_index == 0 || c.kind_index >= kEventKindCount)
      throw std::invalid_argument("TraceWriter: invalid event kind " +
                                  std::to_string(c.kind_index));
    reserve_event();
    EncoderThreadState& st = switch_to_thread(e.thread);
    c.op = c.kind_index;
    code_time(e, st, c);
    code_address_reference(e, st, tracked, tracked_size, c);
    code_size_mode(e, st, c);
    code_mask(e, st, c);
    write_event(e, st, c);
    remember_event(e, st, tracked, c);
  }

  // Writes a thread switch record when the event's thread is not the last
  // one's, and finds that thread's state. Runs of one thread's events are the
  // norm: its state is looked up once per run.
  [[gnu::always_inline]] EncoderThreadState& switch_to_thread(std::uint32_t thread) {
    OutBuf& ops = streams[kOps];
    if (thread != current_thread) {
      ops.u8(kRecordBit | kTagThreadSwitch);
      write_record_fields<kTagThreadSwitch>(ops, thread);
      current_thread = thread;
      current_state = nullptr;
    }
    if (current_state == nullptr) {
      current_state = cached_state(thread);
      if (current_state == nullptr) current_state = enter_thread(thread);
    }
    return *current_state;
  }

  // The state of `thread`, whose state is not cached: found, or made for
  // its first event in this chunk. Starts a new chunk first when this one
  // holds kMaxThreadsPerChunk threads (bounds the reader's per-chunk state;
  // room only grows), or when the thread's state was dropped at its end
  // (an event of an ended thread: the reader still has its state, a new
  // chunk starts both sides afresh).
  [[gnu::noinline]] EncoderThreadState* enter_thread(std::uint32_t thread) {
    auto found = threads.find(thread);
    if (found != threads.end() && found->second) {
      cache_state(thread, found->second.get());
      return found->second.get();
    }
    if (found != threads.end() || threads.size() >= kMaxThreadsPerChunk) {
      flush_chunk();
      OutBuf& ops = streams[kOps];
      ops.u8(kRecordBit | kTagThreadSwitch);
      write_record_fields<kTagThreadSwitch>(ops, thread);
      current_thread = thread;
    }
    auto& state = threads[thread];
    state = new_state();
    cache_state(thread, state.get());
    return state.get();
  }

  // `thread` ended: it makes no more events, so its state is dropped now,
  // not at the end of the chunk. Its entry stays (see `threads`).
  void end_thread(std::uint32_t thread) {
    auto found = threads.find(thread);
    if (found == threads.end()) return;
    if (thread == current_thread) current_state = nullptr;
    cache_state(thread, nullptr);
    if (found->second) give_back_state(found->second);
  }

  // Time: unsigned delta, in resolution units, from the thread's previous event.
  [[gnu::always_inline]] void code_time(const Event& e, EncoderThreadState& st, EventCode& c) {
    std::uint64_t units = time_resolution.divide(e.time_ns);
    if (units >= st.last_time) {
      c.dt = units - st.last_time;
    } else {
      c.dt = st.last_time - units;
      c.op |= kOpTimeBack;
    }
    st.last_time = units;
  }

  // Address: a free of a block allocated earlier in this chunk is the
  // distance back in alloc ordinals; an alloc's is its index among the
  // allocator-model candidates (AllocCandidates); anything else (no
  // kOpAddrRef) a zigzag delta, written by write_event.
  [[gnu::always_inline]] void code_address_reference(const Event& e, EncoderThreadState& st,
                                                     TraceWriter::BlockRef* tracked,
                                                     std::uint64_t tracked_size, EventCode& c) {
    c.alloc = is_alloc_kind(e.kind);
    c.cls = c.alloc ? chunk_class(e.size) : 0;
    if (e.kind == EventKind::free && e.address != 0) {
      std::uint64_t ordinal;
      bool found;
      if (tracked) {
        found = tracked->chunk == chunk_serial;
        ordinal = tracked->ordinal;
        c.ref_size = found ? tracked_size : 0;
      } else {
        // Locals, not c's fields, take the outputs: c then stays in registers.
        std::uint64_t size = 0;
        found = live.take(e.pool, e.address, ordinal, size);
        c.ref_size = size;
      }
      if (found) {
        c.ref_distance = ordinals - ordinal;
        c.op |= kOpAddrRef;
      }
    } else if (c.alloc && e.address != 0 && model) {
      std::uint64_t index = 0;
      if (st.alloc_index_and_take(c.cls, e.address, index)) c.op |= kOpAddrRef;
      c.ref_distance = index;
    }
  }

  // Size: zero, a slot of the recent-size cache, the referenced block's, or explicit.
  [[gnu::always_inline]] void code_size_mode(const Event& e, EncoderThreadState& st, EventCode& c) {
    if (e.size == 0) {
      c.size_mode = kSizeZero;
    } else if (e.kind == EventKind::free && (c.op & kOpAddrRef) && e.size == c.ref_size) {
      c.size_mode = kSizeOfRef;
    } else if ((c.slot = st.find_size(e.size)) >= 0) {
      c.size_mode = kSizeCached;
    } else {
      c.size_mode = kSizeExplicit;
    }
  }

  // The mask says which fields differ from what the thread's state predicts.
  [[gnu::always_inline]] void code_mask(const Event& e, const EncoderThreadState& st,
                                        EventCode& c) {
    c.mask |= c.size_mode << kMaskSizeShift;
    if (e.pool != st.last_pool) c.mask |= kMaskPool;
    if (e.stack != st.last_stack[c.kind_index]) c.mask |= kMaskStack;
    if (e.detail != st.last_detail[c.kind_index]) c.mask |= kMaskDetail;
    if (e.requested != default_requested(e.kind, e.size)) c.mask |= kMaskRequested;
    if (e.aux != 0) c.mask |= kMaskAux;
    if (!(c.op & kOpAddrRef) && e.address != 0) c.mask |= kMaskAddr;
  }

  // Appends the event's bytes to the streams (room was reserved). An explicit
  // size takes a cache slot here, whose address then predicts this one.
  [[gnu::always_inline]] void write_event(const Event& e, EncoderThreadState& st, EventCode& c) {
    OutBuf &misc = streams[kMisc], &sizes = streams[kSize], &addr = streams[kAddr];
    streams[kOps].u8(c.op);
    streams[kOps].u8(c.mask);
    split_varint(streams[kTime], streams[kTimeHigh], c.dt);
    if (c.mask & kMaskPool) misc.varint(e.pool);
    if (c.mask & kMaskStack) misc.varint(st.stack_code(c.kind_index, e.stack));
    if (c.mask & kMaskDetail) misc.u8(e.detail);
    if (c.mask & kMaskAux) misc.varint(e.aux);
    if (c.size_mode == kSizeCached) sizes.u8(static_cast<std::uint8_t>(c.slot));
    if (c.size_mode == kSizeExplicit) {
      split_varint(sizes, streams[kSizeHigh], e.size);
      c.slot = st.insert_size(e.size);
    }
    if (c.mask & kMaskRequested)
      sizes.varint(zigzag(static_cast<std::int64_t>(e.size - e.requested)));
    if (c.op & kOpAddrRef) {
      addr.varint(c.ref_distance);
    } else if (c.mask & kMaskAddr) {
      std::uint64_t predicted = c.slot >= 0 ? st.slot_address[c.slot] : st.last_address;
      split_varint(addr, streams[kAddrHigh],
                   zigzag(static_cast<std::int64_t>(e.address - predicted)));
    }
  }

  // Updates the thread's state and the chunk's block table as the reader
  // will when it decodes this event, so the next one is predicted alike.
  [[gnu::always_inline]] void remember_event(const Event& e, EncoderThreadState& st,
                                             TraceWriter::BlockRef* tracked, const EventCode& c) {
    st.last_pool = e.pool;
    st.set_stack(c.kind_index, e.stack);
    st.last_detail[c.kind_index] = e.detail;
    st.last_address = e.address;
    if (c.slot >= 0) st.slot_address[c.slot] = e.address;
    // Without the model no alloc is coded as a candidate, so the lists
    // that name candidates need not be kept (the reader keeps its own).
    if (e.kind == EventKind::free && e.address != 0 && model)
      st.push_freed(e.address, e.size != 0 ? e.size : c.ref_size);
    if (c.alloc) {
      if (e.address != 0) {
        if (tracked)
          *tracked = TraceWriter::BlockRef{chunk_serial, static_cast<std::uint32_t>(ordinals)};
        else
          live.put(e.pool, e.address, ordinals, e.size);
        if (model) st.push_fresh(e.address + c.cls);
      }
      ++ordinals;
    }
    ++events;
    ++chunk_events;
  }
};

TraceWriter::TraceWriter(const std::string& path, const TraceHeader& header)
    : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->set_time_resolution(header);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || !impl_->own.adopt(fd))
    throw std::runtime_error(path + ": cannot create trace file: " + std::strerror(errno));
  impl_->fd = impl_->own.fd;
  impl_->register_descriptor();
  impl_->by_path = true;
  impl_->reopen_path = path;
  if (path[0] != '/') {  // the program may chdir before a reopen
    char cwd[4096];
    if (::getcwd(cwd, sizeof cwd)) impl_->reopen_path = std::string(cwd) + "/" + path;
  }
  impl_->write_header(header);
}

TraceWriter::TraceWriter(int fd, const std::string& path, const TraceHeader& header)
    : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->set_time_resolution(header);
  if (!impl_->own.adopt(fd))
    throw std::runtime_error(path + ": cannot use the trace file: " + std::strerror(errno));
  impl_->fd = impl_->own.fd;
  impl_->register_descriptor();
  impl_->by_path = true;
  impl_->reopen_path = path;
  impl_->write_header(header);
}

TraceWriter::TraceWriter(int fd, const TraceHeader& header) : impl_(std::make_unique<Impl>()) {
  impl_->path = "fd " + std::to_string(fd);
  impl_->fd = fd;
  detail::register_private_fd(&impl_->fd);
  impl_->set_time_resolution(header);
  impl_->write_header(header);
}

TraceWriter::TraceWriter(const std::string& path, const Resume& resume)
    : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  TraceHeader header;
  header.time_resolution_ns = resume.time_resolution_ns;
  impl_->set_time_resolution(header);
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(resume.keep_bytes)) != 0 ||
      ::lseek(fd, 0, SEEK_END) < 0) {
    int saved = errno;
    if (fd >= 0) ::close(fd);
    throw std::runtime_error(path + ": cannot append to the trace: " + std::strerror(saved));
  }
  impl_->fd = fd;
  detail::register_private_fd(&impl_->fd);
  impl_->bytes = resume.keep_bytes;
  impl_->events = resume.events;
}

TraceWriter::~TraceWriter() {
  try {
    finish();
  } catch (...) {
    // A destructor cannot report; finish() throws to explicit callers.
  }
  impl_->forget_descriptor();
  if (impl_->by_path)
    impl_->own.release();  // a number the program took over is not closed
  else if (impl_->fd >= 0)
    ::close(impl_->fd);
}

void TraceWriter::abandon() {
  impl_->finished = true;
  impl_->forget_descriptor();
  if (impl_->by_path && !impl_->private_table) impl_->own.release();
  impl_->fd = -1;
  impl_->own.fd = -1;
}

void TraceWriter::hand_over_to_private_table(int number) {
  detail::hand_over_locked(&impl_->fd, number);  // closes the program's copy (own.fd's too)
  detail::unregister_private_fd_locked(&impl_->own.fd);
  if (impl_->by_path) impl_->own.fd = number;
  impl_->private_table = true;
}

void TraceWriter::write_only_from_this_thread() {
  impl_->has_writing_thread = true;
  impl_->writing_thread = pthread_self();
}

void TraceWriter::write_pending() {
  if (!impl_->pending.empty() && !impl_->off_thread()) impl_->write_pending();
}

void TraceWriter::lose_private_descriptor() {
  impl_->fd = -1;
  impl_->own.fd = -1;
}

void TraceWriter::add_string(std::uint32_t id, std::string_view text) {
  impl_->max_string_id = std::max(impl_->max_string_id, id);
  impl_->record(kTagString);
  ByteSink s = impl_->record_sink();
  write_record_fields<kTagString>(s, id, text);
  impl_->end_record();
  impl_->maybe_flush();
}

void TraceWriter::add_module(const ModuleInfo& m) {
  impl_->record(kTagModule);
  ByteSink s = impl_->record_sink();
  write_record_fields<kTagModule>(s, m.id, m.path, m.load_address, m.start, m.end, m.build_id);
  impl_->end_record();
  impl_->maybe_flush();
}

void TraceWriter::add_thread(const ThreadInfo& t) {
  impl_->record(kTagThread);
  ByteSink s = impl_->record_sink();
  write_record_fields<kTagThread>(s, t.id, t.tid, t.name);
  impl_->end_record();
  impl_->maybe_flush();
}

void TraceWriter::add_pool(const PoolInfo& p) {
  impl_->record(kTagPool);
  ByteSink s = impl_->record_sink();
  write_record_fields<kTagPool>(s, p.id, p.parent, p.name, p.kind, p.space, p.device);
  impl_->end_record();
  impl_->maybe_flush();
}

void TraceWriter::add_stack_node(const StackNode& n) {
  impl_->record(kTagStackNodeDelta);
  ByteSink s = impl_->record_sink();
  // Differences mod 2^32 (the reader adds them back alike).
  write_record_fields<kTagStackNodeDelta>(s, static_cast<std::uint32_t>(n.id - impl_->last_node),
                                          static_cast<std::uint32_t>(n.id - n.parent), n.ip);
  impl_->end_record();
  impl_->last_node = n.id;
  impl_->maybe_flush();
}

void TraceWriter::add_scope(const ScopeInfo& sc) {
  impl_->record(kTagScope);
  ByteSink s = impl_->record_sink();
  write_record_fields<kTagScope>(s, sc.id, sc.name, sc.kind, sc.pool);
  impl_->end_record();
  impl_->maybe_flush();
}

// A full chunk closes before the next event, not after the one that filled
// it: then no chunk closes while an event is half added (the thread limit
// closes one inside encode), and a caller that counts each event once its
// add returned has counted exactly the closed chunks' (on_chunk_written).
void TraceWriter::add_event(const Event& event) {
  impl_->maybe_flush();
  impl_->last_time_ns = event.time_ns;
  impl_->encode(event);
}

void TraceWriter::add_tracked_event(const Event& event, BlockRef& ref, std::uint64_t block_size) {
  bool block_event = event.kind == EventKind::free || is_alloc_kind(event.kind);
  impl_->maybe_flush();
  impl_->last_time_ns = event.time_ns;
  impl_->encode(event, block_event ? &ref : nullptr, block_size);
}

void TraceWriter::set_address_model(bool on) {
  impl_->want_model = on;
  // Dropping the model is consistent at any point (no later alloc of the
  // chunk names a candidate); taking it up needs the chunk's lists from its
  // first event on.
  if (!on || impl_->chunk_events == 0) impl_->model = on;
}

void TraceWriter::end_thread(std::uint32_t thread) {
  impl_->end_thread(thread);
}

void TraceWriter::release_scratch() {
  impl_->release_scratch();
}

void TraceWriter::flush() {
  if (!impl_->finished) impl_->flush_chunk();
}

void TraceWriter::finish() {
  if (impl_->finished) return;
  impl_->flush_chunk();
  if (impl_->out_of_space && impl_->lost_for_space > 0) write_space_loss();
  impl_->finished = true;
  // The end marker's event count is the file's total, capped to 32 bits.
  std::uint64_t total = impl_->events > 0xffffffffu ? 0xffffffffu : impl_->events;
  impl_->write_frame(kChunkEnd, {}, 0, static_cast<std::uint32_t>(total));
}

void TraceWriter::keep_space_free() {
  impl_->keep_space = true;
}

std::uint64_t TraceWriter::events_lost_for_space() const {
  return impl_->lost_for_space;
}

std::string TraceWriter::space_loss_words() const {
  return "the trace's file system had less than " + std::to_string(impl_->space_reserve >> 20) +
         " MiB free, which the trace leaves to the program: the trace stopped there";
}

// The last chunk: one lost mark (its words a new string), into the room
// room_after() kept for it.
void TraceWriter::write_space_loss() {
  impl_->out_of_space = false;
  impl_->keep_space = false;
  std::uint32_t words = impl_->max_string_id + 1;
  add_string(words, space_loss_words());
  Event lost;
  lost.kind = EventKind::mark;
  lost.detail = static_cast<std::uint8_t>(MarkDetail::lost);
  lost.time_ns = impl_->last_time_ns;
  lost.size = impl_->lost_for_space;
  lost.requested = static_cast<std::uint8_t>(LostReason::disk_space);
  lost.aux = words;
  add_event(lost);
  impl_->flush_chunk();
}

void TraceWriter::on_chunk_written(void (*callback)(void*, std::uint64_t), void* context,
                                   const std::uint64_t* counter) {
  impl_->chunk_written = callback;
  impl_->chunk_written_context = context;
  impl_->chunk_counter = counter;
}

int TraceWriter::descriptor() const {
  return impl_->fd;
}
std::uint64_t TraceWriter::bytes_written() const {
  return impl_->bytes;
}
std::uint64_t TraceWriter::events_written() const {
  return impl_->events;
}

}  // namespace memtrail
