// ScopeSiteGrowth::growing (scope_growth.hpp).
#include "scope_growth.hpp"

#include <algorithm>
#include <cmath>

namespace memtrail::detail {

std::vector<GrowthSite> ScopeSiteGrowth::growing(std::uint64_t entries, std::size_t max) const {
  std::vector<GrowthSite> out;
  if (entries < 2) return out;
  for (const auto& [site, s] : sites_) {
    // Unchanged since an end: the value now is the value at that end.
    const std::int64_t at_last = s.epoch == entries ? s.last : s.live;
    const std::int64_t at_first = s.first_set ? s.first : at_last;
    const double per_entry =
        static_cast<double>(at_last - at_first) / static_cast<double>(entries - 1);
    if (std::llround(per_entry) < 1) continue;
    out.push_back(GrowthSite{SiteId{site}, per_entry,
                             static_cast<std::uint64_t>(std::max<std::int64_t>(at_last, 0))});
  }
  std::sort(out.begin(), out.end(), [](const GrowthSite& a, const GrowthSite& b) {
    return a.bytes_per_entry != b.bytes_per_entry ? a.bytes_per_entry > b.bytes_per_entry
                                                  : a.site < b.site;
  });
  if (out.size() > max) out.resize(max);
  return out;
}

}  // namespace memtrail::detail
