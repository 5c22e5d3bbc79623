// Baselines: the leak sites and pool peaks of a known-good run, so CI fails
// on what is new rather than on what was always there.
#include <fstream>
#include <map>

#include "memtrail/check.hpp"
#include "memtrail/report_json.hpp"
#include "python_frame_kinds.hpp"

namespace memtrail {

using detail::path_basename;

// File names only: the same source checked out elsewhere gives the same key.
// In a Python program's stack a run of the interpreter's nameless frames is
// one token without offsets, as in diff (python_frame_kinds.hpp): its
// internals change from run to run, the Python line does not.
std::string site_key(const FrameList& frames, std::size_t max_frames) {
  const bool python = detail::has_python_frame(frames);
  std::string key;
  std::size_t n = 0;
  bool in_internals = false;
  for (const Frame& f : frames) {
    if (n++ == max_frames) break;
    if (detail::is_interpreter_internal(f, python)) {
      if (!in_internals)
        key += (key.empty() ? "" : " <- ") + std::string(path_basename(f.module)) + "+?";
      in_internals = true;
      continue;
    }
    in_internals = false;
    if (!key.empty()) key += " <- ";
    if (!f.function.empty()) {
      key += f.function;
      if (!f.file.empty()) {
        key += " at ";
        key += path_basename(f.file);
        key += ":" + std::to_string(f.line);
      }
    } else if (!f.module.empty()) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "+0x%llx", static_cast<unsigned long long>(f.offset));
      key += path_basename(f.module);
      key += buf;
    } else {
      key += "?";
    }
  }
  return key.empty() ? "(no stack)" : key;
}

Baseline make_baseline(const Analysis& a, const SuppressionSet& suppressions) {
  Baseline b;
  std::map<std::string, BaselineSite> sites;
  for (const LeakSite& ls : a.leaks.sites) {
    if (!kLeakedKinds.has(ls.kind)) continue;
    const Site& site = at(a.sites, ls.site);
    if (suppressions.match(site.frames) >= 0) continue;
    std::string key = site_key(site.frames);
    BaselineSite& s = sites[key];
    s.key = key;
    s.leaked += ls.tally;
  }
  for (auto& [key, s] : sites) b.leaks.push_back(s);
  for (const PoolStats& p : a.pools)
    b.pools.push_back(BaselinePool{p.info.name, p.peak_used_bytes, p.peak_reserved_bytes});
  b.peak_used_bytes = a.summary.peak_used_bytes;
  return b;
}

nlohmann::json baseline_to_json(const Baseline& b) {
  nlohmann::json leaks = nlohmann::json::array(), pools = nlohmann::json::array();
  for (const auto& s : b.leaks)
    leaks.push_back({{"site", s.key}, {"bytes", s.leaked.bytes}, {"blocks", s.leaked.blocks}});
  for (const auto& p : b.pools)
    pools.push_back({{"name", p.name},
                     {"peak_used_bytes", p.peak_used_bytes},
                     {"peak_reserved_bytes", p.peak_reserved_bytes}});
  return {{"schema", "memtrail.baseline/1"},
          {"peak_used_bytes", b.peak_used_bytes},
          {"leaks", leaks},
          {"pools", pools}};
}

bool load_baseline(const std::string& path, Baseline& out, std::string* error) {
  auto fail = [&](const std::string& message) {
    if (error) *error = "baseline " + path + ": " + message;
    return false;
  };
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail("cannot read the file");
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return fail("not a JSON object");
  if (doc.value("schema", "") != "memtrail.baseline/1")
    return fail("schema is not 'memtrail.baseline/1' (write one with --write-baseline)");
  try {
    out = Baseline{};
    out.peak_used_bytes = doc.at("peak_used_bytes").get<std::uint64_t>();
    for (const auto& s : doc.at("leaks"))
      out.leaks.push_back(BaselineSite{s.at("site").get<std::string>(),
                                       s.at("bytes").get<std::uint64_t>(),
                                       s.at("blocks").get<std::uint64_t>()});
    for (const auto& p : doc.at("pools"))
      out.pools.push_back(BaselinePool{p.at("name").get<std::string>(),
                                       p.at("peak_used_bytes").get<std::uint64_t>(),
                                       p.at("peak_reserved_bytes").get<std::uint64_t>()});
  } catch (const nlohmann::json::exception& e) {
    // e.what() is "[json.exception.out_of_range.403] key 'x' not found": keep it one line.
    return fail(std::string("malformed: ") + e.what());
  }
  return true;
}

}  // namespace memtrail
