// Two analyses compared: per-site deltas (sites matched by pool and
// symbolized stack, never by id, so two runs of a rebuilt program match) and
// per-pool deltas, sorted by impact.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memtrail/analysis.hpp"

namespace memtrail {

// [0] = first trace (A), [1] = second (B).
struct SiteDelta {
  std::string pool;
  FrameList frames;  // from B when present there, else from A
  Tally leaked[2];
  std::uint64_t peak_bytes[2] = {0, 0};
  std::uint64_t calls[2] = {0, 0};
  std::uint64_t bytes_allocated[2] = {0, 0};
  // |Δ leaked bytes| + |Δ peak bytes|; ties broken by |Δ calls|.
  std::uint64_t impact = 0;
};

struct PoolDelta {
  std::string name;
  bool present[2] = {false, false};
  std::uint64_t peak_used_bytes[2] = {0, 0}, peak_reserved_bytes[2] = {0, 0};
  std::uint64_t leaked_bytes[2] = {0, 0};
  std::uint64_t allocations[2] = {0, 0};
  std::uint64_t impact = 0;  // |Δ peak used| + |Δ peak reserved| + |Δ leaked|
};

struct DiffResult {
  Summary summary[2];
  std::vector<SiteDelta> sites;  // changed sites of leaf pools only, by impact
  std::vector<PoolDelta> pools;  // every pool of either side, by impact
};

DiffResult diff_analyses(const Analysis& a, const Analysis& b);
// JSON (schema "memtrail.diff/1"): to_diff_json (report_json.hpp).
// `stack_depth`: frames printed per site (--num-callers).
std::string diff_text(const DiffResult& d, std::size_t top = 10, std::size_t stack_depth = 12);

// The identity used to match a site across traces: pool name plus, per
// frame, the function name (or module file name + offset when unsymbolized);
// a Python frame by its function, file and line. In a stack with Python
// frames, each run of the interpreter's nameless frames is one token, so
// one Python line is one site whatever internals it went through.
std::string site_match_key(const std::string& pool, const FrameList& frames);

}  // namespace memtrail
