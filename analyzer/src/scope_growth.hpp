// Which allocation sites make a scope grow from entry to entry.
//
// For each (scope, site) the engine keeps the bytes allocated inside the
// scope's entries from that site and still live. What matters is that value
// at the scope's first and last entry ends: their difference over the
// entries in between is the site's growth per iteration (a loop that leaks
// one 48-byte block per entry from a site grows it by exactly 48). The value
// at an entry end is settled lazily, on the site's first change after it
// (as a site's bytes at the peak are), so an entry end costs nothing per site.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "memtrail/analysis.hpp"

namespace memtrail::detail {

class ScopeSiteGrowth {
 public:
  // `site`'s live bytes change by `delta` after `entries` entry ends.
  void change(std::uint32_t site, std::int64_t delta, std::uint64_t entries) {
    State& s = sites_[site];
    if (s.epoch != entries) {  // first change since the end of entry `entries`
      if (!s.first_set && entries >= 1) {
        s.first = s.live;
        s.first_set = true;
      }
      s.last = s.live;
      s.epoch = entries;
    }
    s.live += delta;
  }

  // Sites growing by at least one byte per entry over `entries` ends, most
  // first, at most `max` of them.
  std::vector<GrowthSite> growing(std::uint64_t entries, std::size_t max) const;

 private:
  struct State {
    std::int64_t live = 0;   // bytes now
    std::int64_t first = 0;  // at the end of entry 1 (once first_set)
    std::int64_t last = 0;   // at the end of entry `epoch`
    std::uint64_t epoch = 0;
    bool first_set = false;
  };
  std::unordered_map<std::uint32_t, State> sites_;
};

}  // namespace memtrail::detail
