// The .mtr trace file: a versioned header followed by length-prefixed,
// checksummed, zstd-compressed chunks, each decodable on its own. The byte
// layout is documented in docs/trace-format.md; this header is the API.
//
// TraceWriter is single-threaded: the recorder's writer thread owns one; tests
// and tools use it to synthesize traces. TraceReader streams a file with
// memory bounded by one chunk, never crashes on bad input, and says exactly
// what it could not read.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "memtrail/event.hpp"

namespace memtrail {

inline constexpr std::uint16_t kTraceFormatVersion = 1;

struct TraceHeader {
  std::uint16_t version = kTraceFormatVersion;
  std::uint32_t pid = 0;
  std::uint32_t ppid = 0;
  std::uint64_t start_realtime_ns = 0;  // wall clock at trace start (CLOCK_REALTIME)
  // CLOCK_MONOTONIC at trace start; event times are relative to it.
  std::uint64_t start_monotonic_ns = 0;
  std::uint32_t clock_id = 1;  // clockid_t of event times (CLOCK_MONOTONIC)
  // Event times are stored as multiples of this many ns; TraceWriter rounds
  // each time down to it. 1 = exact. The recorder uses 1000 (1 us) unless
  // MEMTRAIL_TIME_RESOLUTION_NS says otherwise (docs/trace-format.md).
  std::uint32_t time_resolution_ns = 1;
  std::string command_line;  // argv joined by spaces
  std::string executable;    // /proc/self/exe
  std::string hostname;
};

namespace detail {
// Where the zstd contexts of TraceWriters made from now on take their
// memory (default: malloc). The recorder points it at its own heap
// (own_heap.hpp), so zstd never allocates from the traced program's.
void set_codec_memory(void* (*allocate)(void* opaque, std::size_t bytes),
                      void (*release)(void* opaque, void* block));
}  // namespace detail

class TraceWriter {
 public:
  // Opens (truncates) `path` and writes the header. Throws std::runtime_error
  // with a one-line message on failure. The descriptor sits at a high
  // number, close-on-exec, and is checked before every write: a program
  // that closed it and reused the number never receives our bytes (the
  // file is reopened by path, or writing stops with an error).
  TraceWriter(const std::string& path, const TraceHeader& header);
  // Adopts an already open file descriptor (used after fork).
  TraceWriter(int fd, const TraceHeader& header);
  // Reopens the trace at `path` whose writer died without finishing it, to
  // append to it: its first `keep_bytes` (header and whole chunks, holding
  // `events` events) are kept, the rest (a chunk cut short) is cut off.
  // `time_resolution_ns` is the header's. Throws std::runtime_error.
  struct Resume {
    std::uint64_t keep_bytes = 0;
    std::uint64_t events = 0;
    std::uint32_t time_resolution_ns = 1;
  };
  TraceWriter(const std::string& path, const Resume& resume);
  // Adopts `fd`, just opened (and empty) for the file at `path`, as the
  // path constructor would have opened it: moved high, checked before every
  // write, reopened by `path` if the program closed it. For a file created
  // through a directory descriptor (a fork child after chroot).
  TraceWriter(int fd, const std::string& path, const TraceHeader& header);
  ~TraceWriter();  // finish()es
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Table records and events are buffered into the current chunk; a chunk is
  // compressed and written when it reaches its target size or on flush().
  void add_string(std::uint32_t id, std::string_view text);
  void add_module(const ModuleInfo& module);
  void add_thread(const ThreadInfo& thread);
  void add_pool(const PoolInfo& pool);
  void add_stack_node(const StackNode& node);
  void add_scope(const ScopeInfo& scope);
  void add_event(const Event& event);

  // Where an alloc's block lies in the writer's chunks. A free of a block
  // allocated in the same chunk is coded as a short reference back to its
  // alloc; add_event() finds that alloc with a table of the chunk's live
  // blocks. A caller that keeps every live block of one pool itself (the
  // recorder's live-heap map) stores a BlockRef with each block instead and
  // calls add_tracked_event() for that pool's allocs and frees, so each of
  // those events costs one table probe, not two. The file is the same.
  struct BlockRef {
    std::uint32_t chunk = 0;  // 0: not in a chunk of this writer
    std::uint32_t ordinal = 0;
  };
  // alloc/reuse: fills `ref` for the block. free: `ref` and `block_size`
  // are what the caller stored with the block (a default BlockRef when it
  // has none). Other kinds: as add_event().
  void add_tracked_event(const Event& event, BlockRef& ref, std::uint64_t block_size);

  // Whether the chunks begun from now on code an alloc's address as a
  // candidate of the glibc model (docs/trace-format.md 3.2; the default:
  // ~1 byte an alloc) or as a delta (~3 bytes). The model costs the writer
  // ~40 ns an event (free lists, recent frees, fresh ends kept per thread);
  // the recorder drops it while its writer is behind. Off takes effect at
  // once; on at the next chunk (at once while the chunk has no event).
  void set_address_model(bool on);

  // Thread `thread` made its last event: the encoder's state for it in the
  // current chunk (~70 KiB) is given back now. The file is the same as
  // without the call; an event of that thread after it is still written
  // right (in a new chunk).
  void end_thread(std::uint32_t thread);

  // Writes the current chunk, if any, with one write(2) so a crash leaves
  // only whole chunks behind.
  void flush();
  // While no chunk is being built (after flush()), gives back the memory
  // one is built in: the streams, the compression buffers, zstd's
  // workspace, the chunk's live-block table (~2-3 MiB on a busy program).
  // The next event takes them again. The recorder's exit scan calls it
  // before taking its own scratch, so the two peaks do not add.
  void release_scratch();
  // Flushes and writes the end-of-trace marker chunk. Idempotent.
  void finish();
  // Writes nothing more and closes the file (a fork child's copy of its
  // parent's writer: the file is the parent's). A file handed over to the
  // recorder's writer thread's own table is not in the child's: only forgotten.
  void abandon();
  // The recorder's writer thread holds a copy of the file at `number` in a
  // descriptor table of its own (tracer/src/private_fd.hpp): the program's
  // copy is closed and the number left to the program. The caller holds
  // private_fd_lock().
  void hand_over_to_private_table(int number);
  // From now on only the calling thread writes the file (it is in its
  // table only); frames other threads make (flushes while they drain) wait
  // in memory until its next write or write_pending().
  void write_only_from_this_thread();
  void write_pending();
  // That table is gone with its thread (a pause for unshare): the number is
  // forgotten, not closed, and the next write reopens the file by its path.
  void lose_private_descriptor();

  // From now on a chunk is written only if the file system keeps a reserve
  // free after it (1/16 of its size, 1 MiB to 64 MiB) for the traced
  // program; once it would not, every later chunk is dropped and its events
  // counted, and finish() ends the trace with a MarkDetail::lost mark
  // (LostReason::disk_space) for them. The recorder's writer sets it.
  void keep_space_free();
  // Events dropped so (0 while every chunk was written), and the loss in words.
  std::uint64_t events_lost_for_space() const;
  std::string space_loss_words() const;

  // Called after each chunk of events is written whole (not for one
  // dropped to keep space free): the recorder then knows which of its
  // events are in the file (its event tally, event_tally.hpp). `*counter`,
  // the caller's count of the events it added (each counted once its add
  // returned), is read as the chunk closes and handed to `callback`: a
  // chunk closes before an event, never while one is added, so the count
  // is the file's own even when the chunk waits for write_pending().
  void on_chunk_written(void (*callback)(void* context, std::uint64_t counted), void* context,
                        const std::uint64_t* counter);

  int descriptor() const;  // -1 once closed
  std::uint64_t bytes_written() const;
  std::uint64_t events_written() const;

 private:
  void write_space_loss();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Receives the contents of a trace in file order. Table records always arrive
// before the first event that refers to them.
class TraceVisitor {
 public:
  virtual ~TraceVisitor() = default;
  virtual void on_header(const TraceHeader&) {}
  virtual void on_string(std::uint32_t /*id*/, std::string_view /*text*/) {}
  virtual void on_module(const ModuleInfo&) {}
  virtual void on_thread(const ThreadInfo&) {}
  virtual void on_pool(const PoolInfo&) {}
  virtual void on_stack_node(const StackNode&) {}
  virtual void on_scope(const ScopeInfo&) {}
  virtual void on_event(const Event&) {}
  // Return false to stop reading early (the read then reports ok).
  virtual bool keep_going() { return true; }
  // A data chunk starting at this byte of the file begins: the records and
  // events after it are its own (read, read_ahead, read_fed, read_from; not
  // read_parallel). A later read_from(offset) resumes exactly here.
  virtual void on_chunk(std::uint64_t /*offset*/) {}

  // Optional batch delivery, for visitors that hand events to another
  // thread. A visitor whose event_buffer() is non-empty gets decoded events
  // stored straight into that span instead of one on_event() call each;
  // events_stored(n) then says that the first n slots were filled. It comes
  // when the span is full, before any other callback, and before read()
  // returns, so the order of events and records is kept. keep_going() is
  // then asked after each events_stored() instead of after each event.
  virtual std::span<Event> event_buffer() { return {}; }
  virtual void events_stored(std::size_t /*n*/) {}
  // Several events at once (a consumer of batches): the same as on_event()
  // for each, in order, without a virtual call per event.
  virtual void on_events(const Event* events, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) on_event(events[i]);
  }
};

struct ReadResult {
  bool ok = false;                  // false: `error` says why reading stopped
  std::string error;                // one line, names the problem and the byte offset
  std::uint64_t chunks = 0;         // whole chunks decoded
  std::uint64_t events = 0;         // events delivered
  std::uint64_t dropped_bytes = 0;  // bytes after the last whole chunk (cut file)
  bool complete = false;            // the end-of-trace marker was seen
  // One line, e.g. "x.mtr: dropped 412 bytes after the last whole chunk".
  std::string warning;
};

// What every reader of traces (report, replay, the GUI) says of a read that
// did not end cleanly. `damaged`: a corrupt chunk or a cut file, an error
// unless the user asked for what was read (--partial). `line` names the
// file once ("x.mtr: cut file: dropped 412 bytes after the last whole
// chunk"; "x.mtr: no end-of-trace marker (program killed?); <done> 3 whole
// chunks" for an unfinished file, not damaged); empty for a clean read.
// `done` is what the caller made of it: "analyzed", "replayed".
struct ReadOutcome {
  bool damaged = false;
  std::string line;
};
ReadOutcome describe_read(const std::string& path, const ReadResult& r, std::string_view done);

class ChunkFeed;

class TraceReader {
 public:
  // Never throws; a file that cannot be opened or has a bad header is
  // reported by read() (and header_error()).
  explicit TraceReader(std::string path);
  ~TraceReader();

  // Empty when the header is readable; otherwise a one-line error such as
  // "x.mtr: not a memtrail trace (bad magic)" or "... unsupported version 7".
  const std::string& header_error() const;
  const TraceHeader& header() const;
  // The file ends with a valid end-of-trace frame, read from its last bytes
  // only (the trace was finished; whether its chunks are whole is read()'s
  // question). False for an unreadable header.
  bool ends_with_end_marker() const;

  // Streams the whole file into `visitor`. Bad chunks stop the read with
  // ok=false and an error naming the offset ("checksum mismatch in chunk at
  // byte 8123"); a cut file reads up to its last whole chunk with ok=true and
  // `dropped_bytes`/`warning` set.
  ReadResult read(TraceVisitor& visitor);
  // read(), with a second thread that reads, checks and decompresses the
  // next chunk while this one decodes: the same delivery, results and
  // errors, one more chunk (compressed and raw) in memory.
  ReadResult read_ahead(TraceVisitor& visitor);
  // The same delivery, results and errors as read(), with `decoders` worker
  // threads decompressing and decoding the next chunks while the calling
  // thread delivers the current one (chunks decode on their own; table
  // references are still checked in file order). Memory grows by up to
  // decoders + 1 decoded chunks of at most `max_buffered_events` events
  // each; a chunk with more is decoded by the calling thread instead.
  // decoders == 0: read().
  ReadResult read_parallel(TraceVisitor& visitor, unsigned decoders,
                           std::size_t max_buffered_events = std::size_t{1} << 20);
  // read_ahead(), with the next chunk read, checked and decompressed by
  // whichever thread calls feed.fill() instead of a thread of the reader's:
  // a consumer of the events can do it between batches, and the decoding
  // thread keeps a core to itself. Same delivery, results and errors.
  ReadResult read_fed(TraceVisitor& visitor, ChunkFeed& feed);
  // read() from the chunk at `chunk_offset` (an on_chunk() offset of an
  // earlier read of this file) to the end, on this thread. The tables of
  // the chunks before it are not delivered again: every table id counts as
  // defined, so the caller must have them from that earlier read.
  ReadResult read_from(TraceVisitor& visitor, std::uint64_t chunk_offset);

 private:
  friend class ChunkFeed;
  struct AheadSlots;  // the read-ahead's chunk slots (trace_reader.cpp)
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The read-ahead of one TraceReader::read_fed(), driven by the caller.
class ChunkFeed {
 public:
  ChunkFeed();
  ~ChunkFeed();
  ChunkFeed(const ChunkFeed&) = delete;
  ChunkFeed& operator=(const ChunkFeed&) = delete;

  // Reads, checks and decompresses the next chunk if the decoder has a free
  // slot; false when there was nothing to do (no free slot yet, read not
  // started, or the file is done). One thread at a time.
  bool fill();
  // Whether fill() would do something now.
  bool fillable();
  // Called on the decoding thread, with no lock held, whenever fill() may
  // have become worth calling (a slot freed, the read started or ended).
  // Set before the read starts.
  void on_slot_freed(std::function<void()> hook);
  // The consumer stopped reading: the decoder stops waiting for chunks.
  void stop();
  // Bytes of the file read so far (header and frames fill() took), for
  // progress in bytes. Ask from the thread that calls fill().
  std::uint64_t bytes_read() const;

 private:
  friend class TraceReader;
  std::unique_ptr<TraceReader::AheadSlots> slots_;
};

}  // namespace memtrail
