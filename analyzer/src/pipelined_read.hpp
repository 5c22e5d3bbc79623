// Reads a trace on a second thread: the reader decodes and decompresses
// chunks into batches of events while the caller's visitor consumes the
// previous batch, so decoding and analysis overlap on two cores. Table
// records keep their exact position between events. Memory stays bounded
// (a few batches in flight).
#pragma once

#include "memtrail/trace_file.hpp"

namespace memtrail::detail {

ReadResult read_pipelined(TraceReader& reader, TraceVisitor& visitor);

}  // namespace memtrail::detail
