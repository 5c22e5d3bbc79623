// Compiled, never run: the build fails when a core analyzer header pulls
// nlohmann/json in again (issue 20). Code that only computes or presents an
// Analysis should not parse a 25k-line JSON library; the JSON builders live
// in memtrail/report_json.hpp. Each header is checked on its own, first
// analysis.hpp, which everything includes.
#include "memtrail/analysis.hpp"
#ifdef NLOHMANN_JSON_VERSION_MAJOR
#error "memtrail/analysis.hpp includes nlohmann/json: move the JSON part to report_json.hpp"
#endif

#include "memtrail/check.hpp"
#ifdef NLOHMANN_JSON_VERSION_MAJOR
#error "memtrail/check.hpp includes nlohmann/json: move the JSON part to report_json.hpp"
#endif

#include "memtrail/diff.hpp"
#ifdef NLOHMANN_JSON_VERSION_MAJOR
#error "memtrail/diff.hpp includes nlohmann/json: move the JSON part to report_json.hpp"
#endif

#include "memtrail/export.hpp"
#ifdef NLOHMANN_JSON_VERSION_MAJOR
#error "memtrail/export.hpp includes nlohmann/json: move the JSON part to report_json.hpp"
#endif

#include "memtrail/session.hpp"
#ifdef NLOHMANN_JSON_VERSION_MAJOR
#error "memtrail/session.hpp includes nlohmann/json: move the JSON part to report_json.hpp"
#endif

#include "memtrail/workspaces.hpp"
#ifdef NLOHMANN_JSON_VERSION_MAJOR
#error "memtrail/workspaces.hpp includes nlohmann/json: move the JSON part to report_json.hpp"
#endif
