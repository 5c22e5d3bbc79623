#include "replay_read_status.hpp"

#include "memtrail/alloc/replay.hpp"

namespace memtrail::alloc {

std::string replay_read_status(const std::string& path, const ReadResult& r, bool allow_partial) {
  ReadOutcome outcome = describe_read(path, r, "replayed");
  if (outcome.damaged && !allow_partial)
    throw ReplayError(outcome.line + " (--partial replays what was read)");
  if (!r.ok) return outcome.line + " (replayed what was read before it)";
  return outcome.line;
}

}  // namespace memtrail::alloc
