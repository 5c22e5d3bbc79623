#include "whatif_spec.hpp"

#include <vector>

#include "memtrail/size.hpp"

namespace memtrail::gui {
namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i)
    if (i == text.size() || text[i] == sep) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  return parts;
}

bool set_field(WhatIfSpec& spec, const std::string& key, const std::string& value,
               std::string* error) {
  if (key == "pool") {
    spec.pool = value;
  } else if (key == "conf") {
    spec.conf = value;
  } else if (key == "mark") {
    spec.mark = value;
  } else if (key == "capacity") {
    std::string why;
    auto size = parse_size(value, &why);
    if (!size || *size == 0) {
      *error = "capacity '" + value + "': " + (size ? "must be more than 0 bytes" : why);
      return false;
    }
    spec.capacity = *size;
  } else {
    *error = "unknown field '" + key + "' (pool, conf, capacity, mark)";
    return false;
  }
  return true;
}

}  // namespace

std::optional<WhatIfSpec> parse_what_if_spec(const std::string& text, std::string* error) {
  const std::vector<std::string> parts = split(text, ';');
  WhatIfSpec spec;
  spec.allocator = parts.front();
  if (spec.allocator != "caching" && spec.allocator != "bfc" && spec.allocator != "malloc" &&
      spec.allocator != "workspace") {
    *error = "unknown allocator '" + spec.allocator + "' (caching, bfc, malloc or workspace)";
    return std::nullopt;
  }
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const auto eq = parts[i].find('=');
    if (eq == std::string::npos) {
      *error = "'" + parts[i] + "': expected FIELD=VALUE";
      return std::nullopt;
    }
    if (!set_field(spec, parts[i].substr(0, eq), parts[i].substr(eq + 1), error))
      return std::nullopt;
  }
  if (spec.allocator == "workspace" && spec.capacity) {
    *error = "capacity is not used by the workspace allocator";
    return std::nullopt;
  }
  return spec;
}

std::string what_if_spec_text(const WhatIfSpec& spec) {
  std::string text = spec.allocator;
  if (!spec.pool.empty()) text += ";pool=" + spec.pool;
  if (!spec.conf.empty()) text += ";conf=" + spec.conf;
  if (spec.capacity) text += ";capacity=" + std::to_string(spec.capacity);
  if (!spec.mark.empty()) text += ";mark=" + spec.mark;
  return text;
}

}  // namespace memtrail::gui
