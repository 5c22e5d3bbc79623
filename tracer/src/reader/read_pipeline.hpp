// TraceReader's one read pipeline: frame source (frame_source.hpp) ->
// chunk decoder (chunk_decoder.hpp) -> table check (table_check.hpp) ->
// the visitor. The public entry points (read, read_from, read_ahead,
// read_fed, read_parallel) differ only in where the decoded chunks come
// from, so each is Impl::run() with its chunk stage: inline on the calling
// thread, decompressed one chunk ahead (read_ahead.hpp), or decoded by
// worker threads (parallel_read.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "memtrail/trace_file.hpp"
#include "reader/chunk_decoder.hpp"
#include "reader/frame_source.hpp"
#include "reader/table_check.hpp"

namespace memtrail {

struct TraceReader::Impl {
  reader::FrameSource source;
  reader::DefinedIds ids;        // file-wide
  reader::Frame frame;           // the inline stage's current chunk
  reader::ChunkDecoder decoder;  // the calling thread's decoder
  bool from_middle = false;      // read_from(): the end marker's count covers more

  // Where a read starts: the first chunk, or (read_from) a chunk in the
  // middle, whose tables are in the chunks before it.
  struct Plan {
    std::uint64_t offset = 0;  // 0: the first chunk
    bool from_middle = false;
  };
  // The pipeline: the header to the visitor, then `chunks(sink, r, offset)`
  // delivers the chunks through the table check. Defined in trace_reader.cpp.
  template <class ChunkStage>
  ReadResult run(TraceVisitor& v, Plan plan, ChunkStage&& chunks);

  // Before the first chunk. False: `r` is final.
  bool start(TraceVisitor& v, ReadResult& r);
  // The end-of-trace marker `end`, after every chunk before it was delivered.
  void end_of_trace(ReadResult& r, const reader::Frame& end, std::uint64_t offset) const;
  // Frames that end the read (eof, cut file, error, end marker) into `r`;
  // false for a data frame.
  bool ends_read(reader::FrameKind kind, const reader::Frame& f, const ReadResult& stop,
                 std::uint64_t next_offset, ReadResult& r) const;

  // The chunk stages.
  void read_chunks(reader::DirectSink& sink, ReadResult& r, std::uint64_t offset);
  void read_chunks_ahead(reader::DirectSink& sink, ReadResult& r, AheadSlots& ahead);
  void read_chunks_parallel(reader::DirectSink& sink, ReadResult& r, unsigned decoders,
                            std::size_t max_buffered_events);
  // Decodes the chunk whose decompressed payload is in decoder.payload.
  // False: the read ends here (`r` says why).
  bool decode_chunk(const reader::Frame& f, reader::DirectSink& sink, ReadResult& r);
  std::string error_at(const std::string& what, std::uint64_t offset) const {
    return source.path + ": " + what + source.at(offset);
  }
};

}  // namespace memtrail
