// Ways into the recorder besides the public record(), for this project's
// tracer libraries: events without a stack walk, with a stack taken earlier,
// and a synchronous drain. Not installed.
#pragma once

#include <cstdint>
#include <string_view>

#include "memtrail/event.hpp"

namespace memtrail::detail {

// Synchronously drains every thread's published events into the trace file
// and flushes it. Returns when the writer has written them (or after ~2 s if
// the writer is stuck). No-op when not tracing.
void flush_all_threads();
// Like flush_all_threads(); then, every event being in the file, the writer
// gives back the memory it builds chunks in and the event blocks kept warm
// (TraceWriter::release_scratch, BlockPool::release_warm). For the exit
// scan, about to take its own scratch: the tracer's peaks do not add. The
// next events take them again.
void flush_all_threads_lean();

// Like record_slow() (dropped under the reentrancy guard), but never walks
// the stack: for frees, whose block is identified by its alloc's stack (as
// heaptrack does it), halving the unwinding a malloc/free pair costs.
// Returns false on a thread past its exit notice (the recorder's pthread key
// destructor), where nothing is recorded although glibc still frees there.
bool record_unwalked(const Event& event);

// Records `event` as given, even under the caller's reentrancy guard (lifted
// for this call): time and thread are filled in, the stack is NOT captured
// (event.stack is kept, 0 = none). For events the exit hook records, which
// runs under the guard: reachability (preload and CUPTI) and late frees.
void record_unwalked_past_guard(Event event);

// Records that `count` of the program's events are not in the trace, and
// why (a MarkDetail::lost mark: report and check say so). `words` is the
// reason for a reader, e.g. "before start-up: the early buffer was full".
// Not from inside malloc (it may allocate); a no-op when not tracing.
void record_lost(std::uint64_t count, LostReason reason, std::string_view words);

// Records `event` with a stack taken earlier by backtrace_here() (time and
// thread are filled in now; frames in the recorder's own modules are
// skipped). For events the preload buffered before the session started.
void record_with_frames(const Event& event, const std::uint64_t* ips, int n);

// The return addresses of the calling thread's stack (unw_backtrace), errno
// kept; usable before any session exists. Returns how many were stored.
int backtrace_here(std::uint64_t* ips, int limit);

}  // namespace memtrail::detail
