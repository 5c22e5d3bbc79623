// The leak programs of tests/leaks/programs and their expected leak classes:
// Valgrind memcheck's numbers (verified with valgrind-3.19 on every program
// at -O0 and -O2), from which memtrail's follow (MemtrailCounts::from), and
// the places where LeakSanitizer is known to disagree with Valgrind.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "leak_tools.hpp"

namespace memtrail::leaks {

struct LsanDisagreement {
  const char* opt;  // "O0", "O2" or "" for both
  LsanCounts counts;
  const char* why;
};

// Where memtrail keeps its own answer against Valgrind's (docs/tracing.md,
// "Kept where memtrail is righter than Valgrind").
struct MemtrailDeparture {
  ValgrindCounts counts;  // memtrail's classes, in Valgrind's terms
  const char* why;
};

struct LeakProgram {
  const char* name;
  const char* source;       // in tests/leaks/programs
  bool links_ctor_libs;     // linked to libctorkeep.so and libctorleak.so
  ValgrindCounts expected;  // definitely, indirectly, possibly lost, still reachable
  std::vector<LsanDisagreement> lsan_differs = {};
  // Blocks of the runtime that Valgrind classifies besides `expected` and
  // memtrail counts as the runtime's: the DTV ld.so allocates for a thread
  // still alive at exit (272 B, which Valgrind calls possibly lost).
  ValgrindCounts valgrind_runtime = {};
  std::optional<MemtrailDeparture> memtrail_differs = {};
};

// memtrail's expected classes for `p`: Valgrind's, unless it departs.
inline MemtrailCounts memtrail_expected(const LeakProgram& p) {
  return MemtrailCounts::from(p.memtrail_differs ? p.memtrail_differs->counts : p.expected);
}

// The DTV of one thread alive at exit, as Valgrind 3.19 classifies it.
inline constexpr ValgrindCounts kOneLiveThreadDtv = {{}, {}, {1, 272}, {}};

inline const std::vector<LeakProgram>& leak_programs() {
  static const std::vector<LeakProgram> programs = {
      {"dead_frame_local", "dead_frame_local.c", false, {{1, 123}, {}, {}, {}}},
      {"dead_frame_memalign",
       "dead_frame_memalign.c",
       false,
       {{1, 200}, {}, {}, {}},
       {{"O2",
         {},
         "LSan scans the exiting thread from its own stack pointer, so main's dead frame is a "
         "root; clang -O2 leaves `a` in a slot of it that exit() does not overwrite"}}},
      {"exit_nested", "exit_nested.c", false, {{1, 55}, {}, {}, {3, 600}}},
      {"recycled", "recycled.c", false, {{24, 1664}, {}, {}, {8, 1024}}},
      {"threads200", "threads200.c", false, {{200, 160800}, {}, {}, {}}},
      {"stale_remainder", "stale_remainder.c", false, {{1, 2000}, {}, {}, {}}},
      {"ldso_cache", "ldso_cache.c", false, {{1, 262144}, {}, {}, {}}},
      {"exited_threads", "exited_threads.c", false, {{6, 8007}, {}, {}, {}}},
      {"cycle",
       "cycle.c",
       false,
       {{1, 48}, {4, 160}, {}, {2, 64}},
       {{"",
         {{0, 0}, {5, 208}},
         "LSan calls every member of a leaked cycle indirect (each is pointed to by another "
         "leaked block); Valgrind makes the first one direct"}}},
      {"tree", "tree.c", false, {{1, 32}, {14, 448}, {}, {7, 224}}},
      {"interior", "interior.c", false, {{1, 100}, {}, {1, 256}, {1, 64}}},
      {"possible_chain", "possible_chain.c", false, {{}, {}, {3, 208}, {2, 96}}},
      {"realloc_chain", "realloc_chain.c", false, {{2, 5017}, {}, {}, {1, 3000}}},
      {"aligned", "aligned.c", false, {{2, 8320}, {1, 40}, {}, {1, 512}}},
      {"new_array", "new_array.cpp", false, {{1, 168}, {10, 160}, {}, {1, 72}}},
      {"plugin_relative", "plugin_relative.c", false, {{1, 321}, {}, {}, {}}},
      {"plugin_loop", "plugin_loop.c", false, {{1000, 7000}, {}, {}, {}}},
      {"ctor_libs", "ctor_libs.c", true, {{1, 64}, {}, {}, {1, 5000}}},
      {"silent_thread", "silent_thread.c", false, {{}, {}, {}, {1, 96}}, {}, kOneLiveThreadDtv},
      {"register_dance", "register_dance.c", false, {{}, {}, {}, {1, 40}}, {}, kOneLiveThreadDtv},
      {"loader_lock", "loader_lock.c", false, {{}, {}, {}, {8, 256}}, {}, kOneLiveThreadDtv},
      {"vector_register",
       "vector_register.c",
       false,
       {{1, 48}, {}, {}, {}},
       {{"",
         {},
         "LSan scans a stopped thread's whole register context, vector registers included, so "
         "the pointer in xmm15 keeps the block; Valgrind scans the general registers only"}},
       kOneLiveThreadDtv},
      {"libc_buffers", "libc_buffers.c", false, {{1, 77}, {}, {}, {}}},
      {"multiple_inheritance", "multiple_inheritance.cpp", false, {{}, {}, {}, {2, 48}}},
      {"threads64", "threads64.c", false, {{}, {}, {}, {64, 4096}}, {}, {{}, {}, {64, 17408}, {}}},
      {"map_cycle",
       "map_cycle.cpp",
       false,
       {{1, 200048}, {5, 360}, {}, {1, 8}},
       {{"",
         {{0, 0}, {6, 200408}},
         "the Index and its tree's root node point at each other: LSan calls every member of "
         "the leaked cycle indirect; Valgrind makes the first-allocated one direct"}}},
      {"image_constant",
       "image_constant.cpp",
       false,
       {{}, {}, {1, 9000}, {}},
       {{"",
         {{1, 9000}, {}},
         "LSan's allocator keeps its heap far above the program's .data integers, so no word "
         "points into the leak; Valgrind's heap lies among them"}},
       {},
       MemtrailDeparture{{{1, 9000}, {}, {}, {}},
                         "a word of the program's .data that still holds the value its file "
                         "gave it is a link-time constant, no pointer: Valgrind scans it and "
                         "calls the block it happens to point into possibly lost"}},
      {"start_integers",
       "start_integers.c",
       false,
       {{}, {}, {1, 9000}, {}},
       {{"",
         {{1, 9000}, {}},
         "LSan's allocator keeps its heap far above the integers the program's start-up "
         "code stored; Valgrind's heap lies among them"}},
       {},
       MemtrailDeparture{{{1, 9000}, {}, {}, {}},
                         "a word of the program's .bss that still holds the value it held "
                         "when the tracer started cannot point at a block allocated since: "
                         "Valgrind scans it and calls the block it happens to point into "
                         "possibly lost"}},
  };
  return programs;
}

// What LeakSanitizer should say about `p` built at `opt`, and why when that
// differs from Valgrind (empty otherwise).
inline std::pair<LsanCounts, std::string> lsan_expected(const LeakProgram& p,
                                                        const std::string& opt) {
  for (const auto& d : p.lsan_differs)
    if (std::string(d.opt).empty() || opt == d.opt) return {d.counts, d.why};
  return {{p.expected.definite, p.expected.indirect}, ""};
}

}  // namespace memtrail::leaks
