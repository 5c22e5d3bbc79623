#include "replay_read_status.hpp"

#include "memtrail/alloc/replay.hpp"

namespace memtrail::alloc {

std::string replay_read_status(const std::string& path, const ReadResult& r, bool allow_partial) {
  const char* hint = " (--partial replays what was read)";
  if (!r.ok) {
    if (!allow_partial) throw ReplayError(r.error + hint);
    return r.error + " (replayed what was read before it)";
  }
  if (r.dropped_bytes > 0) {
    const std::string what =
        "cut file: " + (!r.warning.empty() ? r.warning
                                           : std::to_string(r.dropped_bytes) +
                                                 " bytes after the last whole chunk were dropped");
    if (!allow_partial) throw ReplayError(path + ": " + what + hint);
    return path + ": " + what;
  }
  if (!r.complete)
    return path + ": no end-of-trace marker (program killed?); replayed " +
           std::to_string(r.chunks) + " whole chunks";
  return r.warning;
}

}  // namespace memtrail::alloc
