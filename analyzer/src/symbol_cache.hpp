// Persistent symbol cache next to a trace (`TRACE.symbols`, JSON): resolved
// frames keyed by module build id + offset, so reports after the first skip
// DWARF entirely. Only modules with a build id are cached (the id is what
// makes an entry valid for another run); an unreadable or stale cache is
// ignored and rewritten, never an error.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "memtrail/analysis.hpp"

namespace memtrail::detail {

class SymbolCache {
 public:
  explicit SymbolCache(std::string path);
  // Frames for `offset` in the module with `build_id`, or nullptr.
  const std::vector<Frame>* find(const std::string& build_id, std::uint64_t offset) const;
  void add(const std::string& build_id, std::uint64_t offset, const std::vector<Frame>& frames);
  // Writes the file if entries were added (best effort).
  void save() const;

 private:
  static std::string key(const std::string& build_id, std::uint64_t offset);
  std::string path_;
  std::unordered_map<std::string, std::vector<Frame>> entries_;
  bool dirty_ = false;
};

}  // namespace memtrail::detail
