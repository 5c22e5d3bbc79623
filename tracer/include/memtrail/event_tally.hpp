// The event tally of a trace being written into a `memtrail run` directory:
// a small file beside the trace (<trace>.tally), mapped shared by the
// traced process, that outlives it. Each program thread counts the events
// it makes in a slot of its own; the writer stores how many of them are in
// whole chunks of the file. A process that ends without finishing its trace
// (a raw exit_group, SIGKILL, a failed write) leaves the difference behind:
// `memtrail run` reads it, ends the trace with a `lost` mark of that many
// events (LostReason::process_ended) and removes the tally. A finished trace
// removes its own tally. docs/tracing.md, "Abrupt ends".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace memtrail {

inline constexpr char kTallyMagic[8] = {'M', 'T', 'R', 'T', 'A', 'L', 'L', 'Y'};
inline constexpr const char* kTallySuffix = ".tally";  // after the trace's name
inline constexpr std::size_t kTallyHeaderBytes = 4096;
// A slot is a cache line of its own (no thread writes another's line); its
// first word counts the events made by the threads that held it, one after
// another (a slot outlives its thread and is handed to the next).
inline constexpr std::size_t kTallySlotBytes = 64;
inline constexpr std::size_t kTallySlots = 1024;  // threads alive at once with a slot

// The first bytes of the file.
struct TallyHeader {
  char magic[8];
  std::uint32_t version;  // 1
  std::uint32_t pid;
  // The program's events whose records are in whole chunks of the trace.
  std::uint64_t written;
  // Threads that made events without a slot (more than kTallySlots at once):
  // then `made` is short of theirs, and the loss a lower bound.
  std::uint64_t threads_without_slot;
};

struct TallyCounts {
  bool ok = false;
  std::string error;  // !ok: why the tally could not be read
  std::uint32_t pid = 0;
  std::uint64_t made = 0, written = 0;
  bool exact = true;  // false: some threads had no slot
};

// Reads a tally file (`path`, <trace>.tally).
TallyCounts read_event_tally(const std::string& path);

}  // namespace memtrail
