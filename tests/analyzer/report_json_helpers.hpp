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

}  // namespace memtrail::test
