// Exports of an analysis to the formats other tools read. docs/analyzer.md
// documents each (Chrome counters, SQLite schema, pprof sample types).
//
//   json    the full analysis: report sections, every site and frame once
//           (referred to by id), timelines, fragmentation series, marks and
//           large-block lifetimes
//   chrome  Trace Event Format JSON for ui.perfetto.dev / chrome://tracing:
//           counters per pool (used, reserved), process (rss, heap), slices
//           for large blocks, instants for marks
//   folded  "frame;frame;frame cost" lines for flamegraph.pl / speedscope
//   sqlite  a database with tables meta, pools, threads, modules, stack_nodes,
//           frames, sites, scopes, marks and events (streamed from the trace)
//   pprof   gzip-compressed profile.proto with alloc_objects, alloc_space,
//           inuse_objects, inuse_space (go tool pprof, Perfetto UI)
#pragma once

#include <ostream>
#include <string>

#include "memtrail/analysis.hpp"

namespace memtrail {

// The full analysis as JSON, each site and each distinct frame once: the
// report's sections with top lists and leak sites naming sites by id,
// `frames` (every distinct frame) and `sites` (counters, `frames`: ids into
// it). Streamed: memory is the Analysis plus one site at a time. `top` > 0
// limits each top list and the leak sites to that many, and `sites` to the
// sites they name.
void write_full_json(const Analysis& a, std::size_t top, std::ostream& out);
// chrome: to_chrome_trace (report_json.hpp).

// What one folded line weighs.
enum class FoldedCost { allocations, bytes, leaked, peak, temporary };
bool parse_folded_cost(const std::string& name, FoldedCost& out);
void write_folded(const Analysis& a, FoldedCost cost, std::ostream& out);
// One frame of a folded line: the function name ("train_step at
// train.py:20" for a Python frame, describe() when the name is unknown),
// ';' and newlines replaced. The call trees (call_tree.hpp) name nodes so.
std::string folded_frame_name(const Frame& f);

// Returns an empty string on success, else a one-line error. The events
// table is filled by reading the trace (a.path) again, restricted to the
// analysis' time range.
std::string write_sqlite(const Analysis& a, const std::string& db_path);

// The uncompressed profile.proto bytes, and the gzip-compressed file.
std::string pprof_profile_bytes(const Analysis& a);
std::string write_pprof(const Analysis& a, const std::string& path);

}  // namespace memtrail
