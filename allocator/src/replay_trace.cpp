// Trace input of replays. Placeholder until the .mtr reader (TraceReader)
// is implemented in memtrail_format.
#include "memtrail/alloc/replay.hpp"

namespace memtrail::alloc {

ReplayScript ReplayScript::from_trace(const std::string& path, const std::string&) {
  throw ReplayError(path +
                    ": replaying .mtr traces needs the trace reader, which is not built yet");
}

}  // namespace memtrail::alloc
