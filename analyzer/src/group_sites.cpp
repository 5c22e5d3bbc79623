// Merging sites by their symbolized stacks (group_sites.hpp).
#include "group_sites.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "leak_sites.hpp"

namespace memtrail::detail {

namespace {

// What a reader sees of one frame. Unnamed frames keep their address: two
// unknown functions must not merge just because nothing is known of them.
std::string frame_identity(const Frame& f) {
  std::string id = f.inlined ? "i" : "o";
  id += f.module;
  id += '\0';
  if (f.function.empty() && f.file.empty())
    return id + (f.module.empty() ? std::to_string(f.address) : std::to_string(f.offset));
  id += f.function;
  id += '\0';
  id += f.file;
  id += '\0';
  return id + std::to_string(f.line);
}

void add_site(Site& into, const Site& s) {
  into.calls += s.calls;
  into.reuses += s.reuses;
  into.bytes_allocated += s.bytes_allocated;
  into.temporaries += s.temporaries;
  into.peak_bytes += s.peak_bytes;  // live bytes at one moment: they add up
  into.leaked += s.leaked;
  into.direct += s.direct;
  into.indirect += s.indirect;
  into.possible += s.possible;
  into.reachable += s.reachable;
  into.live_at_range_end += s.live_at_range_end;
}

// One id per distinct frame identity.
class FrameIds {
 public:
  std::uint32_t id(const Frame& f) {
    return ids_.try_emplace(frame_identity(f), static_cast<std::uint32_t>(ids_.size()))
        .first->second;
  }

 private:
  std::unordered_map<std::string, std::uint32_t> ids_;
};

// The id of each entry of the shared frame table: a few hundred strings, not
// one per frame per site.
std::vector<std::uint32_t> table_frame_ids(const FrameTable* table, FrameIds& ids) {
  std::vector<std::uint32_t> out;
  if (!table) return out;
  out.reserve(table->frames.size());
  for (const Frame& f : table->frames) out.push_back(ids.id(f));
  return out;
}

// (pool, frame ids) of a site.
std::vector<std::uint32_t> site_key(const Site& s, const FrameTable* shared,
                                    const std::vector<std::uint32_t>& table_ids, FrameIds& ids) {
  std::vector<std::uint32_t> key{s.pool.value};
  if (shared && s.frames.table() == shared)
    for (std::uint32_t i : s.frames.indices()) key.push_back(table_ids[i]);
  else  // a list over a table of its own
    for (const Frame& f : s.frames) key.push_back(ids.id(f));
  return key;
}

// Entries that name the same merged site become one (`add` folds the second
// into the first), in the order of their first.
template <class T, class Site, class Add>
void merge_by_site(std::vector<T>& items, Site site_of, Add add) {
  std::vector<T> out;
  std::unordered_map<std::uint32_t, std::size_t> at;
  for (T& item : items) {
    auto [it, fresh] = at.try_emplace(site_of(item), out.size());
    if (fresh)
      out.push_back(std::move(item));
    else
      add(out[it->second], item);
  }
  items = std::move(out);
}

// Every index into Analysis::sites outside the leak list (rebuilt).
void remap_site_indices(Analysis& a, const std::vector<std::uint32_t>& new_index) {
  auto remap = [&](SiteId& site) {
    if (site.value < new_index.size()) site = SiteId{new_index[site.value]};
  };
  for (BlockLifetime& b : a.large_blocks) remap(b.site);
  for (ScopeStats& scope : a.scopes) {
    for (GrowthSite& g : scope.growth_sites) remap(g.site);
    merge_by_site(
        scope.growth_sites, [](const GrowthSite& g) { return g.site.value; },
        [](GrowthSite& into, const GrowthSite& g) {
          into.bytes_per_entry += g.bytes_per_entry;
          into.live_bytes += g.live_bytes;
        });
    std::stable_sort(scope.growth_sites.begin(), scope.growth_sites.end(),
                     [](const GrowthSite& x, const GrowthSite& y) {
                       return x.bytes_per_entry > y.bytes_per_entry;
                     });
  }
  for (WorkspaceReport& w : a.workspaces) {
    for (WorkspaceSpillSite& s : w.spill_sites) remap(s.site);
    merge_by_site(
        w.spill_sites,
        [](const WorkspaceSpillSite& s) {
          // Spills whose alloc has no site stay apart (by their stack).
          return s.site == WorkspaceSpillSite::kNoSite ? ~s.stack.value : s.site.value;
        },
        [](WorkspaceSpillSite& into, const WorkspaceSpillSite& s) {
          into.spills += s.spills;
          into.bytes += s.bytes;
        });
    std::stable_sort(
        w.spill_sites.begin(), w.spill_sites.end(),
        [](const WorkspaceSpillSite& x, const WorkspaceSpillSite& y) { return x.bytes > y.bytes; });
  }
}

}  // namespace

void group_sites_by_source(Analysis& a) {
  if (a.sites.empty()) return;
  FrameIds ids;
  const FrameTable* shared = a.frame_table.get();
  std::vector<std::uint32_t> table_ids = table_frame_ids(shared, ids);
  std::map<std::vector<std::uint32_t>, std::uint32_t> first_of_key;
  std::vector<std::uint32_t> new_index(a.sites.size());
  std::deque<Site> merged;
  // Popped as they merge, like the engine's hand-over: never held twice.
  for (std::uint32_t i = 0; !a.sites.empty(); ++i) {
    Site s = std::move(a.sites.front());
    a.sites.pop_front();
    auto [it, fresh] = first_of_key.try_emplace(site_key(s, shared, table_ids, ids),
                                                static_cast<std::uint32_t>(merged.size()));
    new_index[i] = it->second;
    if (fresh)
      merged.push_back(std::move(s));
    else
      add_site(merged[it->second], s);
  }
  a.sites = std::move(merged);
  remap_site_indices(a, new_index);
  rebuild_leak_sites(a);
}

void rebuild_leak_sites(Analysis& a) {
  a.leaks.sites = leak_sites_of(a.sites, [&](PoolId pool) {
    const PoolStats* p = a.pool(pool);
    return p && p->upstream;
  });
}

}  // namespace memtrail::detail
