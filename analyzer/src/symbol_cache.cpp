#include "symbol_cache.hpp"

#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

namespace memtrail::detail {

namespace {
constexpr const char* kSchema = "memtrail.symbols/1";
}

SymbolCache::SymbolCache(std::string path) : path_(std::move(path)) {
  std::ifstream in(path_);
  if (!in) return;
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.value("schema", "") != kSchema || !j["frames"].is_object()) return;
  for (auto& [k, list] : j["frames"].items()) {
    if (!list.is_array()) continue;
    std::vector<Frame> frames;
    for (auto& f : list) {
      if (!f.is_array() || f.size() != 4 || !f[0].is_string() || !f[1].is_string() ||
          !f[2].is_number_unsigned() || !f[3].is_boolean())
        return;  // damaged: ignore the whole cache
      Frame fr;
      fr.function = f[0].get<std::string>();
      fr.file = f[1].get<std::string>();
      fr.line = f[2].get<std::uint32_t>();
      fr.inlined = f[3].get<bool>();
      frames.push_back(std::move(fr));
    }
    entries_.emplace(k, std::move(frames));
  }
}

std::string SymbolCache::key(const std::string& build_id, std::uint64_t offset) {
  char buf[32];
  std::snprintf(buf, sizeof buf, ":%llx", static_cast<unsigned long long>(offset));
  return build_id + buf;
}

const std::vector<Frame>* SymbolCache::find(const std::string& build_id,
                                            std::uint64_t offset) const {
  auto it = entries_.find(key(build_id, offset));
  return it == entries_.end() ? nullptr : &it->second;
}

void SymbolCache::add(const std::string& build_id, std::uint64_t offset,
                      const std::vector<Frame>& frames) {
  entries_[key(build_id, offset)] = frames;
  dirty_ = true;
}

void SymbolCache::save() const {
  if (!dirty_) return;
  nlohmann::json frames = nlohmann::json::object();
  for (auto& [k, list] : entries_) {
    nlohmann::json l = nlohmann::json::array();
    for (const Frame& f : list) l.push_back({f.function, f.file, f.line, f.inlined});
    frames[k] = l;
  }
  // Write then rename: a concurrent reader sees the old or the new file.
  std::string tmp = path_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return;
    out << nlohmann::json{{"schema", kSchema}, {"frames", frames}}.dump();
    if (!out) {
      std::remove(tmp.c_str());
      return;
    }
  }
  if (std::rename(tmp.c_str(), path_.c_str()) != 0) std::remove(tmp.c_str());
}

}  // namespace memtrail::detail
