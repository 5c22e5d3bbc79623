// Sites filtered by the text of their backtrace's frames (site_filter.hpp).
#include "memtrail/site_filter.hpp"

#include <algorithm>
#include <vector>

#include "group_sites.hpp"

namespace memtrail {

namespace {

// ASCII only, as symbols and most paths are: no locale, no allocation.
char fold_ascii(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// Summary and leak totals from the kept sites of leaf pools.
void recount(Analysis& a) {
  Summary& s = a.summary;
  Leaks& l = a.leaks;
  s.allocations = s.bytes_allocated = s.temporary_allocations = 0;
  l.direct = l.indirect = l.reachable = l.possible = Tally{};
  for (const Site& site : a.sites) {
    if (const PoolStats* p = a.pool(site.pool); p && p->upstream) continue;
    s.allocations += site.calls;
    s.bytes_allocated += site.bytes_allocated;
    s.temporary_allocations += site.temporaries;
    l.direct += site.direct;
    l.indirect += site.indirect;
    l.reachable += site.reachable;
    l.possible += site.possible;
  }
  s.leaked = l.direct + l.indirect;
}

}  // namespace

SiteFilter SiteFilter::function_name(std::string name) {
  return {std::move(name), Fields::function, Case::exact};
}

SiteFilter SiteFilter::search_box(std::string text) {
  return {std::move(text), Fields::function_file_module, Case::ignore};
}

bool holds_text(std::string_view haystack, std::string_view needle, SiteFilter::Case letter_case) {
  if (letter_case == SiteFilter::Case::exact) return haystack.find(needle) != haystack.npos;
  const auto at = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                              [](char h, char n) { return fold_ascii(h) == fold_ascii(n); });
  return at != haystack.end() || needle.empty();
}

namespace {

// One frame's (or tree symbol's) texts, in the fields the filter reads.
bool holds_in_fields(const SiteFilter& filter, std::string_view function, std::string_view file,
                     std::string_view module) {
  if (holds_text(function, filter.text, filter.letter_case)) return true;
  return filter.fields == SiteFilter::Fields::function_file_module &&
         (holds_text(file, filter.text, filter.letter_case) ||
          holds_text(module, filter.text, filter.letter_case));
}

}  // namespace

bool SiteFilter::matches(const FrameList& frames) const {
  if (text.empty()) return true;
  for (const Frame& f : frames)
    if (holds_in_fields(*this, f.function, f.file, f.module)) return true;
  return false;
}

bool SiteFilter::matches(const TreeSymbol& symbol) const {
  return text.empty() || holds_in_fields(*this, symbol.name, symbol.file, symbol.module);
}

std::size_t keep_sites_with_function(Analysis& a, const std::string& name) {
  constexpr std::uint32_t kGone = ~std::uint32_t{0};
  std::vector<std::uint32_t> new_index(a.sites.size(), kGone);
  std::deque<Site> kept;
  const SiteFilter filter = SiteFilter::function_name(name);
  for (std::uint32_t i = 0; !a.sites.empty(); ++i) {
    if (filter.matches(a.sites.front())) {
      new_index[i] = static_cast<std::uint32_t>(kept.size());
      kept.push_back(std::move(a.sites.front()));
    }
    a.sites.pop_front();
  }
  a.sites = std::move(kept);
  std::vector<BlockLifetime> blocks;
  for (BlockLifetime b : a.large_blocks)
    if (b.site.value < new_index.size() && new_index[b.site.value] != kGone) {
      b.site = SiteId{new_index[b.site.value]};
      blocks.push_back(b);
    }
  a.large_blocks = std::move(blocks);
  detail::rebuild_leak_sites(a);
  recount(a);
  return a.sites.size();
}

}  // namespace memtrail
