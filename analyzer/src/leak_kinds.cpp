// --show-leak-kinds parsing (see leak_kinds.hpp).
#include "memtrail/leak_kinds.hpp"

#include <algorithm>

#include "memtrail/analysis.hpp"

namespace memtrail {

std::optional<LeakKinds> LeakKinds::parse(std::string_view text, std::string* error) {
  LeakKinds kinds;
  if (text.empty()) {
    if (error) *error = "is empty (definite,indirect,possible,reachable, all or none)";
    return std::nullopt;
  }
  while (true) {
    std::size_t comma = text.find(',');
    std::string_view word = text.substr(0, comma);
    if (word == "all")
      kinds.bits_ |= kAllLeakKinds.bits_;
    else if (word == "none")
      ;
    else if (word == "definite")
      kinds.bits_ |= bit(LeakClass::direct);
    else if (word == "indirect")
      kinds.bits_ |= bit(LeakClass::indirect);
    else if (word == "possible")
      kinds.bits_ |= bit(LeakClass::possible);
    else if (word == "reachable")
      kinds.bits_ |= bit(LeakClass::reachable);
    else {
      if (error)
        *error = "'" + std::string(word) +
                 "' is no leak kind (definite, indirect, possible, reachable, all, none)";
      return std::nullopt;
    }
    if (comma == std::string_view::npos) return kinds;
    text.remove_prefix(comma + 1);
  }
}

void keep_leak_kinds(Leaks& leaks, LeakKinds kinds) {
  std::erase_if(leaks.sites, [&](const LeakSite& s) { return !kinds.has(s.kind); });
}

}  // namespace memtrail
