// TraceReader: streams a .mtr file chunk by chunk. Memory is bounded by one
// chunk (its payload plus its alloc-ordinal table) and the sets of defined
// table ids; read_parallel() holds up to decoders + 1 decoded chunks on top.
// Every malformed input ends in a one-line error naming the byte offset of
// the chunk; a file cut mid-chunk reads up to its last whole chunk.
//
// One pipeline (reader/read_pipeline.hpp), one file per stage: the frame
// source (reader/frame_source.*), the chunk decoder (reader/chunk_decoder.hpp),
// the table check (reader/table_check.hpp), reading ahead
// (reader/read_ahead.*) and parallel reading (reader/parallel_read.*). This
// file holds the entry points, each Impl::run() with its chunk stage, and
// the inline stage.
#include <thread>
#include <utility>

#include "memtrail/size.hpp"
#include "memtrail/trace_file.hpp"
#include "reader/read_ahead.hpp"
#include "reader/read_pipeline.hpp"

namespace memtrail {

using reader::DecodeError;
using reader::DirectSink;
using reader::Frame;
using reader::FrameKind;

template <class ChunkStage>
ReadResult TraceReader::Impl::run(TraceVisitor& v, Plan plan, ChunkStage&& chunks) {
  ReadResult r;
  if (!start(v, r)) return r;
  std::uint64_t offset = plan.from_middle ? plan.offset : source.data_offset;
  if (plan.from_middle) {
    if (offset < source.data_offset || offset > source.file_size || !source.seek(offset)) {
      r.error = source.path + ": no chunk at byte " + std::to_string(offset);
      return r;
    }
    ids.accept_all();
  }
  from_middle = plan.from_middle;
  DirectSink sink{ids, v, r};
  chunks(sink, r, offset);
  sink.flush();  // the events decoded before the end, the stop or the error
  from_middle = false;
  return r;
}

bool TraceReader::Impl::start(TraceVisitor& v, ReadResult& r) {
  if (!source.header_error.empty()) {
    r.error = source.header_error;
    return false;
  }
  v.on_header(source.header);
  ids.clear();
  if (!source.seek(source.data_offset)) {
    r.error = source.path + ": cannot seek to byte " + std::to_string(source.data_offset);
    return false;
  }
  if (!v.keep_going()) {
    r.ok = true;
    return false;
  }
  return true;
}

void TraceReader::Impl::end_of_trace(ReadResult& r, const Frame& end, std::uint64_t offset) const {
  r.complete = true;
  if (end.count != 0xffffffffu && end.count != r.events && !from_middle) {
    r.error = error_at("end marker counts " + std::to_string(end.count) + " events but " +
                           std::to_string(r.events) + " were read",
                       end.offset);
    return;
  }
  if (offset < source.file_size)
    r.warning = source.path + ": ignored " + count_text(source.file_size - offset, "byte") +
                " after the end-of-trace marker";
  r.ok = true;
}

bool TraceReader::Impl::ends_read(FrameKind kind, const Frame& f, const ReadResult& stop,
                                  std::uint64_t next_offset, ReadResult& r) const {
  switch (kind) {
    case FrameKind::eof:
      r.ok = true;
      return true;
    case FrameKind::stop:
      r.ok = stop.ok;
      r.error = stop.error;
      r.dropped_bytes = stop.dropped_bytes;
      r.warning = stop.warning;
      return true;
    case FrameKind::end:
      end_of_trace(r, f, next_offset);
      return true;
    case FrameKind::data:
      break;
  }
  return false;
}

// The inline chunk stage: read, decompress and decode on the calling thread.
void TraceReader::Impl::read_chunks(DirectSink& sink, ReadResult& r, std::uint64_t offset) {
  for (;;) {
    ReadResult stop;
    FrameKind kind = source.next_frame(offset, frame, stop);  // advances offset
    if (ends_read(kind, frame, stop, offset, r)) return;
    try {
      decoder.decompress(frame);
    } catch (const DecodeError& e) {
      r.error = error_at(e.what, frame.offset);
      return;
    }
    sink.flush();  // the events of earlier chunks come before the chunk's start
    sink.v.on_chunk(frame.offset);
    if (!decode_chunk(frame, sink, r)) return;
  }
}

bool TraceReader::Impl::decode_chunk(const Frame& f, DirectSink& sink, ReadResult& r) {
  try {
    if (!decoder.decode(f, source.header.time_resolution_ns, sink)) {
      r.ok = true;  // the visitor stopped reading inside this chunk
      return false;
    }
    ++r.chunks;
    return true;
  } catch (const DecodeError& e) {
    r.error = error_at(e.what, f.offset);
    return false;
  }
}

TraceReader::TraceReader(std::string path) : impl_(std::make_unique<Impl>()) {
  impl_->source.path = std::move(path);
  impl_->source.read_header();
}

TraceReader::~TraceReader() = default;

const std::string& TraceReader::header_error() const {
  return impl_->source.header_error;
}
const TraceHeader& TraceReader::header() const {
  return impl_->source.header;
}
bool TraceReader::ends_with_end_marker() const {
  return impl_->source.ends_with_end_marker();
}

ReadResult TraceReader::read(TraceVisitor& visitor) {
  Impl& m = *impl_;
  return m.run(visitor, {}, [&](DirectSink& sink, ReadResult& r, std::uint64_t offset) {
    m.read_chunks(sink, r, offset);
  });
}

ReadResult TraceReader::read_from(TraceVisitor& visitor, std::uint64_t chunk_offset) {
  Impl& m = *impl_;
  return m.run(visitor, {chunk_offset, true},
               [&](DirectSink& sink, ReadResult& r, std::uint64_t offset) {
                 m.read_chunks(sink, r, offset);
               });
}

ReadResult TraceReader::read_ahead(TraceVisitor& visitor) {
  Impl& m = *impl_;
  return m.run(visitor, {}, [&](DirectSink& sink, ReadResult& r, std::uint64_t) {
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
  });
}

ReadResult TraceReader::read_fed(TraceVisitor& visitor, ChunkFeed& feed) {
  Impl& m = *impl_;
  AheadSlots& ahead = *feed.slots_;
  struct Stopper {  // the feeder must not wait for this read any more
    AheadSlots& a;
    ~Stopper() {
      a.stop();
      if (a.slot_freed) a.slot_freed();
    }
  } stopper{ahead};
  return m.run(visitor, {}, [&](DirectSink& sink, ReadResult& r, std::uint64_t) {
    ahead.start(m);
    m.read_chunks_ahead(sink, r, ahead);
  });
}

ReadResult TraceReader::read_parallel(TraceVisitor& visitor, unsigned decoders,
                                      std::size_t max_buffered_events) {
  if (decoders == 0) return read(visitor);
  max_buffered_events = std::max<std::size_t>(max_buffered_events, 1);
  Impl& m = *impl_;
  return m.run(visitor, {}, [&](DirectSink& sink, ReadResult& r, std::uint64_t) {
    m.read_chunks_parallel(sink, r, decoders, max_buffered_events);
  });
}

}  // namespace memtrail
