// Reads a trace on a second thread: the reader decodes and decompresses
// chunks into batches of events while the caller's visitor consumes the
// previous batch, so decoding and analysis overlap on two cores (the
// chunks read and decompressed ahead by a third thread, or with
// `bytes_read` by the calling thread). Table
// records keep their exact position between events. Memory stays bounded
// (a few batches in flight).
#pragma once

#include <cstdint>
#include <functional>

#include "memtrail/trace_file.hpp"

namespace memtrail::detail {

// `bytes_read`, when set, is called on the calling thread after each chunk
// it read ahead (it then reads them, one report per chunk), with the bytes
// of the file read so far; false stops the read as the visitor's
// keep_going() would (the result then reports ok).
ReadResult read_pipelined(TraceReader& reader, TraceVisitor& visitor,
                          const std::function<bool(std::uint64_t)>& bytes_read = {});

}  // namespace memtrail::detail
