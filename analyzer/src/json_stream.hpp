// Writes a JSON document exactly as nlohmann::json::dump(2) would, except
// that the arrays named in `lazy` (by JSON pointer, e.g. "/leaks/sites") are
// not in the document: their elements come from a generator, one at a time,
// and are written as they come. `report --json --top 100000` then needs the
// memory of one site's JSON, not of all of them (it was killed at 23.4 GB).
#pragma once

#include <functional>
#include <map>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace memtrail::detail {

// Calls `emit` once per element, in order.
using ElementSource = std::function<void(const std::function<void(const nlohmann::json&)>& emit)>;
using LazyArrays = std::map<std::string, ElementSource>;

void write_pretty_json(std::ostream& out, const nlohmann::json& doc, const LazyArrays& lazy);

}  // namespace memtrail::detail
