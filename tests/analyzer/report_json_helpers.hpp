// Test helper: questions asked of `report --json` output.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace memtrail::test {

// Whether a JSON stack (array of frames) has a function containing `part`.
inline bool stack_has(const nlohmann::json& stack, const std::string& part) {
  for (const auto& f : stack)
    if (f["function"].get<std::string>().find(part) != std::string::npos) return true;
  return false;
}

// The stack of a site object of `report` (a top-site entry or a growth
// site): its `frames` ids resolved through the document's `frames` table.
inline nlohmann::json site_stack(const nlohmann::json& report, const nlohmann::json& site) {
  if (site.contains("stack")) return site["stack"];  // a site whose frames are not shared
  nlohmann::json stack = nlohmann::json::array();
  for (const auto& id : site["frames"]) stack.push_back(report["frames"].at(id.get<std::size_t>()));
  return stack;
}

}  // namespace memtrail::test
