// MEMTRAIL_SCAN_DEBUG=1: for every block the exit-time leak scan classifies
// "possibly lost", one stderr line naming the pointer that reached it and
// where that pointer lay (which root range: a module's data, a thread's
// stack, registers or TLS, a program mapping; or which block), with the
// /proc/self/maps line of that address; and for every word that pointed
// inside a block but was not followed as CPython data (python_data_words),
// the object it lay in. For finding why a leak reads
// possible in one run and direct in the next. Off by default; costs nothing
// then but one getenv at exit.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "python_data_words.hpp"
#include "reachability.hpp"

namespace memtrail::preload {

// Reads MEMTRAIL_SCAN_DEBUG; at start-up (prepare_leak_scan), before the
// recorder lists unknown MEMTRAIL_ variables and while the environment is
// still the one the program was started with.
void init_scan_debug();

class ScanDebug {
 public:
  ScanDebug();
  bool on() const { return on_; }
  // Names the root ranges added from here on (a range may later be split).
  void label(const char* what, std::uint64_t tid, std::span<const MemoryRange> ranges);
  // One line per block classified possible (a pointer in a pymalloc arena
  // named with the block and object it lay in).
  void report(std::span<const HeapBlock> blocks, std::span<const LeakClass> classes,
              std::span<const PossibleCause> causes, const std::string& maps,
              PythonDataWords& python) const;
  // One line per word not followed because it is CPython data, naming the
  // block it pointed into and the object it lay in.
  void report_data_words(std::span<const HeapBlock> blocks, std::span<const DataWordNote> notes,
                         const std::string& maps) const;

 private:
  struct Labelled {
    MemoryRange range;
    const char* what;
    std::uint64_t tid;
  };
  bool on_ = false;
  std::vector<Labelled> labels_;
};

}  // namespace memtrail::preload
