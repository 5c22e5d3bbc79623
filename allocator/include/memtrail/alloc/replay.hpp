// Replays: drive a sequence of allocations through an allocator policy over
// the virtual upstream (no memory touched) and watch what it reserves.
//
// Script syntax (one operation per line, '#' starts a comment):
//   A = malloc 1000            # sizes as in parse_size: 3MiB, 1.5 GiB; stream=N optional
//   free A
//   record_stream A 2          # A is also used on stream 2 (freed once 2 synchronizes)
//   synchronize [2]            # one stream, or all
//   empty_cache
//   stats                      # report the policy's stats here
// Names bind blocks; using a name that is not live is an error naming the
// line. A malloc that runs out of memory (with a capacity) is counted and
// leaves its name unbound; freeing it later does nothing. A size above
// kMaxRequestBytes (2^63-1, PyTorch's and XLA's int64 limit), a line longer
// than kMaxScriptLine bytes and a NUL byte are errors naming the line.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "memtrail/alloc/caching_pool.hpp"
#include "memtrail/alloc/errors.hpp"

namespace memtrail::alloc {

class ReplayError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ReplayOp {
  enum class Kind : std::uint8_t { malloc, free, empty_cache, stats, record_stream, synchronize };
  Kind kind = Kind::stats;
  bool all_streams = false;  // synchronize without a stream
  std::uint32_t slot = 0;    // name index (malloc, free, record_stream)
  std::uint32_t line = 0;
  std::uint64_t size = 0;
  StreamId stream = 0;
};

// Longest script line accepted: a script is text, so a longer "line" is
// almost surely a binary file, and is not read into memory whole.
inline constexpr std::size_t kMaxScriptLine = 4096;

// Reads a script one operation at a time, checking names as it goes, so a
// replay holds only the names, never the whole script.
class ReplayScriptReader {
 public:
  ReplayScriptReader(std::istream& in, std::string source);
  // The next operation; false at the end of the input. Throws ReplayError
  // "SOURCE:LINE: what is wrong".
  bool next(ReplayOp& op);
  const std::vector<std::string>& names() const { return names_; }
  std::uint32_t lines() const { return number_; }

 private:
  bool read_line();
  ReplayError fail(const std::string& why) const;
  std::uint32_t live_slot(std::string_view name, const char* op);
  StreamId stream_number(std::string_view text) const;
  void parse_malloc(const std::vector<std::string_view>& words, ReplayOp& op);

  std::istream& in_;
  std::string source_, line_;
  std::uint32_t number_ = 0;
  std::vector<std::string> names_;  // slot -> name
  std::unordered_map<std::string, std::uint32_t> slots_;
  std::vector<bool> live_;
};

struct ReplayScript {
  std::string source;  // file name, for messages
  std::vector<ReplayOp> ops;
  std::vector<std::string> names;  // slot -> name
  std::string warning;             // one line, e.g. a trace cut short; empty if none
  // Trace input only: the addresses of the pool's whole-segment reserves, in
  // order (what --keep-addresses replays with).
  std::vector<std::uint64_t> segment_addresses;
  // Trace input only: the recorded time of each op's event (ops[i] happened
  // at op_time_ns[i]), so a replayed series can be drawn beside the
  // recorded one (memtrail-gui's What-if view).
  std::vector<std::uint64_t> op_time_ns;

  // Throws ReplayError "SOURCE:LINE: what is wrong".
  static ReplayScript parse(std::istream& in, const std::string& source);
  static ReplayScript parse_file(const std::string& path);
  // The alloc/reuse/free events of the pool(s) named `pool` in a .mtr trace,
  // in file order, as a script (one stream; sizes are the requested bytes).
  // Frees of blocks the trace never saw allocated are skipped; an alloc at a
  // still-live address frees the old block first. Throws ReplayError for an
  // unreadable trace or an unknown pool. `line` of each op is its event's
  // index in the pool's sequence.
  // A cut or damaged trace is an error unless `allow_partial`; then what was
  // read is replayed and `warning` says what was dropped (as `report`).
  static ReplayScript from_trace(const std::string& path, const std::string& pool,
                                 bool allow_partial = false);
};

enum class ReplayAllocator { caching, bfc, malloc };

struct ReplayOptions {
  ReplayAllocator allocator = ReplayAllocator::caching;
  std::string conf;            // CachingConfig text (caching) or BfcOptions text (bfc)
  std::uint64_t capacity = 0;  // virtual device size; 0 = unbounded
  // Segments take the script's recorded segment_addresses instead of the
  // virtual scheme (see VirtualResource::plan_addresses). Needs a trace input
  // whose pool recorded segment reserves; throws ReplayError otherwise.
  bool keep_addresses = false;
};

struct ReplayResult {
  std::uint64_t ops = 0, mallocs = 0, frees = 0, ooms = 0;
  std::uint64_t peak_reserved = 0, peak_allocated = 0, peak_fragmentation = 0;
  std::uint64_t final_reserved = 0, final_allocated = 0;
  // keep_addresses only: recorded addresses used, and skipped because they
  // overlapped a range the replay still had in use.
  std::uint64_t addresses_kept = 0, addresses_skipped = 0;
};

class ReplaySink {
 public:
  virtual ~ReplaySink() = default;
  // At each `stats` line: the policy's stats (PyTorch memory_stats() keys for
  // caching, JAX memory_stats() keys for bfc).
  virtual void on_stats(const ReplayOp& op, const std::map<std::string, std::int64_t>& stats) = 0;
  virtual void on_oom(const ReplayOp& op, const std::string& message) = 0;
  // After each op (and once before the first, for a policy that reserves up
  // front): the policy's reserved and allocated bytes once `ops_done`
  // operations ran. The peaks of ReplayResult are the maxima of these.
  virtual void on_level(std::uint64_t ops_done, std::uint64_t reserved, std::uint64_t allocated) {
  }
};

// Throws ConfigError for a bad conf string, ReplayError for a bad script.
ReplayResult run_replay(const ReplayScript& script, const ReplayOptions& options,
                        ReplaySink* sink = nullptr);
// The same, reading the script as it runs (memory bounded by the names, not
// the length of the script). An error stops the replay at its line.
ReplayResult run_replay(ReplayScriptReader& script, const ReplayOptions& options,
                        ReplaySink* sink = nullptr);

}  // namespace memtrail::alloc
