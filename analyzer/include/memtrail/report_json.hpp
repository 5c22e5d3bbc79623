// The JSON documents the analyzer builds: `report --json` and its pieces,
// the diff, the check baseline and the Chrome trace. They live here, apart
// from the structures they read, so that the core headers (analysis.hpp,
// diff.hpp, check.hpp, export.hpp, workspaces.hpp) do not pull nlohmann/json
// into every file that only computes or presents an Analysis
// (tests/analyzer/core_headers_no_json.cpp checks them).
#pragma once

#include <cstddef>
#include <ostream>

#include <nlohmann/json.hpp>

#include "memtrail/analysis.hpp"

namespace memtrail {

struct DiffResult;  // diff.hpp
struct Baseline;    // check.hpp

// The `memtrail.report/1` schema of DESIGN.md (stable keys) plus more keys.
// Site objects of top_sites and scopes[].growth_sites name their frames by
// index into the document's `frames` table (docs/analyzer.md).
// `top`: how many sites per top list and leak sites (0 = all).
nlohmann::json to_report_json(const Analysis& a, std::size_t top = 20);
// The same document as to_report_json(a, top) with `extra`'s keys added,
// written as dump(2) writes it, site by site: memory stays that of one
// site's JSON whatever `top` is.
void write_report_json(std::ostream& out, const Analysis& a, std::size_t top,
                       const nlohmann::json& extra = nlohmann::json::object());
nlohmann::json frame_to_json(const Frame& frame);
nlohmann::json frames_to_json(const FrameList& frames);
// The pieces the report and the full export (export.hpp) share.
nlohmann::json site_to_json(const Analysis& a, SiteId site);
nlohmann::json series_to_json(const Series& s);
nlohmann::json fragmentation_to_json(const Fragmentation& f);
// `workspaces` of report --json: one object per workspace (keys as the
// fields of WorkspaceReport; spill_sites with their stacks).
nlohmann::json workspaces_to_json(const Analysis& a);

// Schema "memtrail.diff/1"; `top` limits the site list (0 = all).
nlohmann::json to_diff_json(const DiffResult& d, std::size_t top = 20);

// Schema "memtrail.baseline/1" (check.hpp: make_baseline, load_baseline).
nlohmann::json baseline_to_json(const Baseline& b);

// Trace Event Format JSON (export.hpp: "chrome").
nlohmann::json to_chrome_trace(const Analysis& a);

}  // namespace memtrail
