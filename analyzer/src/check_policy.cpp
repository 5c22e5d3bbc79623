// Policy files: a repository's limits and suppressions in one JSON object,
// so CI scripts need only `memtrail check --policy memtrail-policy.json`.
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "memtrail/check.hpp"
#include "memtrail/size.hpp"

namespace memtrail {

namespace {

using nlohmann::json;

// Paths in a policy are relative to the policy file, so the file works from
// any working directory.
std::string relative_to(const std::string& policy_path, const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_absolute()) return path;
  return (std::filesystem::path(policy_path).parent_path() / p).lexically_normal().string();
}

bool read_size(const json& v, const std::string& key, std::uint64_t& out, std::string* error) {
  if (v.is_number_unsigned()) {
    out = v.get<std::uint64_t>();
    return true;
  }
  if (v.is_string()) {
    std::string why;
    if (auto n = parse_size(v.get<std::string>(), &why)) {
      out = *n;
      return true;
    }
    *error = "'" + key + "': " + why;
    return false;
  }
  *error = "'" + key + "' must be a size (\"64 MiB\" or a number of bytes)";
  return false;
}

bool read_strings(const json& v, const std::string& key, std::vector<std::string>& out,
                  std::string* error) {
  if (!v.is_array()) {
    *error = "'" + key + "' must be an array of strings";
    return false;
  }
  for (const json& item : v) {
    if (!item.is_string()) {
      *error = "'" + key + "' must be an array of strings";
      return false;
    }
    out.push_back(item.get<std::string>());
  }
  return true;
}

}  // namespace

bool load_policy(const std::string& path, CheckConfig& out, std::string* error) {
  std::string why;
  auto fail = [&](const std::string& message) {
    if (error) *error = "policy " + path + ": " + message;
    return false;
  };
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail("cannot read the file");
  json doc = json::parse(in, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (doc.is_discarded()) return fail("not valid JSON");
  if (!doc.is_object()) return fail("expected a JSON object");

  for (const auto& [key, v] : doc.items()) {
    std::uint64_t n = 0;
    if (key == "max_leaked" || key == "max_peak" || key == "max_reserved") {
      if (!read_size(v, key, n, &why)) return fail(why);
      (key == "max_leaked" ? out.max_leaked_bytes
       : key == "max_peak" ? out.max_peak_bytes
                           : out.max_reserved_bytes) = n;
    } else if (key == "max_scope_growth") {
      if (!read_size(v, key, n, &why)) return fail(why);
      out.max_scope_growth = n;
    } else if (key == "max_leaked_blocks") {
      if (!v.is_number_unsigned())
        return fail("'max_leaked_blocks' must be a non-negative integer");
      out.max_leaked_blocks = v.get<std::uint64_t>();
    } else if (key == "pools") {
      if (!read_strings(v, key, out.pools, &why)) return fail(why);
    } else if (key == "suppressions") {
      if (!read_strings(v, key, out.suppressions, &why)) return fail(why);
    } else if (key == "suppression_files") {
      std::vector<std::string> files;
      if (!read_strings(v, key, files, &why)) return fail(why);
      for (const auto& f : files) out.suppression_files.push_back(relative_to(path, f));
    } else if (key == "baseline") {
      if (!v.is_string()) return fail("'baseline' must be a path");
      out.baseline = relative_to(path, v.get<std::string>());
    } else if (key == "tolerance") {
      if (!v.is_number() || v.get<double>() < 0)
        return fail("'tolerance' must be a percentage >= 0");
      out.tolerance_percent = v.get<double>();
    } else if (key == "default_suppressions") {
      if (!v.is_boolean()) return fail("'default_suppressions' must be true or false");
      out.default_suppressions = v.get<bool>();
    } else if (key == "accept_lost_events") {
      if (!v.is_boolean()) return fail("'accept_lost_events' must be true or false");
      out.accept_lost_events = v.get<bool>();
    } else if (key == "top") {
      if (!v.is_number_unsigned()) return fail("'top' must be a non-negative integer");
      out.top_sites = v.get<std::size_t>();
    } else {
      return fail(
          "unknown key '" + key +
          "' (known: max_leaked, max_leaked_blocks, max_peak, max_reserved, max_scope_growth, "
          "pools, "
          "suppressions, suppression_files, baseline, tolerance, default_suppressions, "
          "accept_lost_events, top)");
    }
  }
  return true;
}

}  // namespace memtrail

namespace memtrail {

bool build_suppressions(const CheckConfig& config, SuppressionSet& out, std::string* error) {
  for (const auto& file : config.suppression_files)
    if (!load_suppressions(file, out, error)) return false;
  for (const auto& line : config.suppressions)
    if (!parse_suppressions(line, "policy", out, error)) return false;
  if (config.default_suppressions) add_default_suppressions(out);
  return true;
}

}  // namespace memtrail
