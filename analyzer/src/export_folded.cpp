// Folded stacks: one line per distinct symbolized call path, outermost frame
// first, so flamegraph.pl and speedscope draw it as a flame graph.
#include <map>

#include "memtrail/export.hpp"

namespace memtrail {

std::string folded_frame_name(const Frame& f) {
  // A Python frame's line tells apart what its function name cannot (one
  // <module> runs the whole script): "train_step at train.py:20".
  const bool python = is_python_frame(f.address);
  std::string s = f.function.empty() || python ? f.describe() : f.function;
  for (char& c : s)
    if (c == ';' || c == '\n') c = ':';  // ';' separates frames
  return s;
}

namespace {

std::uint64_t cost_of(const Site& s, FoldedCost c) {
  switch (c) {
    case FoldedCost::allocations:
      return s.calls;
    case FoldedCost::bytes:
      return s.bytes_allocated;
    case FoldedCost::leaked:
      return s.leaked.bytes;
    case FoldedCost::peak:
      return s.peak_bytes;
    case FoldedCost::temporary:
      return s.temporaries;
  }
  return 0;
}

}  // namespace

bool parse_folded_cost(const std::string& name, FoldedCost& out) {
  static const std::pair<const char*, FoldedCost> names[] = {
      {"allocations", FoldedCost::allocations},
      {"bytes", FoldedCost::bytes},
      {"leaked", FoldedCost::leaked},
      {"peak", FoldedCost::peak},
      {"temporary", FoldedCost::temporary}};
  for (auto& [n, c] : names)
    if (name == n) {
      out = c;
      return true;
    }
  return false;
}

void write_folded(const Analysis& a, FoldedCost cost, std::ostream& out) {
  std::map<std::string, std::uint64_t> lines;  // sorted: stable output
  bool many_pools = a.pools.size() > 1;
  for (const Site& s : a.sites) {
    std::uint64_t c = cost_of(s, cost);
    const PoolStats* p = a.pool(s.pool);
    if (c == 0 || (p && p->upstream)) continue;  // leaf pools only: no bytes twice
    std::string path;
    if (many_pools && p) path = "[" + p->info.name + "]";
    for (auto it = s.frames.rbegin(); it != s.frames.rend(); ++it) {
      if (!path.empty()) path += ';';
      path += folded_frame_name(*it);
    }
    if (path.empty()) path = "(no stack)";
    lines[path] += c;
  }
  for (auto& [path, c] : lines) out << path << ' ' << c << '\n';
}

}  // namespace memtrail
