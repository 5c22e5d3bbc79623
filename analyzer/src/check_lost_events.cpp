// The "lost-events" verdict of memtrail check (check.hpp): a trace that is
// short of the program's events cannot vouch for its leaks or peaks, so it
// fails unless the user accepts the loss.
#include "memtrail/check.hpp"
#include "memtrail/size.hpp"

namespace memtrail {

std::optional<CheckItem> check_lost_events(const Analysis& a, bool accept) {
  const std::uint64_t lost = a.lost_event_count();
  const bool cut = !a.read.complete;
  if (lost == 0 && !cut) return std::nullopt;
  std::string why;
  for (const LostEvents& l : a.lost_events)
    why += (why.empty() ? "" : "; ") + std::to_string(l.count) + " " + l.words;
  if (cut)
    why += std::string(why.empty() ? "" : "; ") +
           "the trace has no end-of-trace marker: the events after its last whole chunk are lost "
           "(the program ended without exit handlers, or was killed)";
  CheckItem item;
  item.name = "lost-events";
  item.passed = accept;
  item.summary = (lost != 0 ? count_text(lost, "event") + " of the program are not in the trace"
                            : std::string("events of the program are not in the trace")) +
                 ": " + why +
                 (accept ? " (accepted: --accept-lost-events)"
                         : "; leaks and peaks may be wrong (--accept-lost-events accepts it)");
  return item;
}

}  // namespace memtrail
