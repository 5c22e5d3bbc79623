// Merging sites by their symbolized stacks (group_sites.hpp).
#include "group_sites.hpp"

#include <algorithm>
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

// A site's key as a reader sees it: its pool and the identity of each frame.
class SiteKeys {
 public:
  explicit SiteKeys(const FrameTable* shared) : shared_(shared) {
    // The shared table's ids once: a few hundred strings, not one per frame
    // per site.
    if (!shared) return;
    table_ids_.reserve(shared->frames.size());
    for (const Frame& f : shared->frames) table_ids_.push_back(ids_.id(f));
  }

  std::vector<std::uint32_t> key(const Site& s) {
    std::vector<std::uint32_t> key{s.pool.value};
    for_each_id(s, [&](std::uint32_t id) { key.push_back(id); });
    return key;
  }

  std::uint64_t hash(const Site& s) {
    std::uint64_t h = mix(0x9e3779b97f4a7c15ull ^ s.pool.value);
    for_each_id(s, [&](std::uint32_t id) { h = mix(h ^ id); });
    return h;
  }

 private:
  template <class Fn>
  void for_each_id(const Site& s, Fn fn) {
    if (shared_ && s.frames.table() == shared_)
      for (std::uint32_t i : s.frames.indices()) fn(table_ids_[i]);
    else  // a list over a table of its own
      for (const Frame& f : s.frames) fn(ids_.id(f));
  }
  static std::uint64_t mix(std::uint64_t x) {  // splitmix64's finalizer
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  }

  const FrameTable* shared_;
  FrameIds ids_;
  std::vector<std::uint32_t> table_ids_;
};

// For each site, the first site with an equal key (itself when none). Keys
// are hashed, sorted, and compared only where hashes are equal: ~16 bytes per
// site, where a map of keys held every key (+10 MiB at 10^5 stacks, the GUI's
// memory target, docs/BENCHMARKS.md).
std::vector<std::uint32_t> first_equal_sites(const std::deque<Site>& sites, SiteKeys& keys) {
  const auto n = static_cast<std::uint32_t>(sites.size());
  std::vector<std::pair<std::uint64_t, std::uint32_t>> by_hash(n);
  for (std::uint32_t i = 0; i < n; ++i) by_hash[i] = {keys.hash(sites[i]), i};
  std::sort(by_hash.begin(), by_hash.end());  // (hash, index): index order within a hash
  std::vector<std::uint32_t> first(n);
  for (std::size_t b = 0, e = 0; b < n; b = e) {
    for (e = b + 1; e < n && by_hash[e].first == by_hash[b].first;) ++e;
    std::vector<std::pair<std::vector<std::uint32_t>, std::uint32_t>> distinct;
    for (std::size_t k = b; k < e; ++k) {
      const std::uint32_t i = by_hash[k].second;
      first[i] = i;
      if (e - b == 1) break;
      std::vector<std::uint32_t> key = keys.key(sites[i]);
      auto same = std::find_if(distinct.begin(), distinct.end(),
                               [&](const auto& d) { return d.first == key; });
      if (same != distinct.end())
        first[i] = same->second;
      else
        distinct.emplace_back(std::move(key), i);
    }
  }
  return first;
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

std::vector<std::uint32_t> group_sites_by_source(Analysis& a) {
  if (a.sites.empty()) return {};
  std::vector<std::uint32_t> new_index;
  {
    SiteKeys keys(a.frame_table.get());
    new_index = first_equal_sites(a.sites, keys);
  }
  std::deque<Site> merged;
  // Popped as they merge, like the engine's hand-over: never held twice.
  // A site's first equal comes before it, so its new index is known.
  for (std::uint32_t i = 0; !a.sites.empty(); ++i) {
    Site s = std::move(a.sites.front());
    a.sites.pop_front();
    if (new_index[i] == i) {
      new_index[i] = static_cast<std::uint32_t>(merged.size());
      merged.push_back(std::move(s));
    } else {
      new_index[i] = new_index[new_index[i]];
      add_site(merged[new_index[i]], s);
    }
  }
  a.sites = std::move(merged);
  remap_site_indices(a, new_index);
  rebuild_leak_sites(a);
  return new_index;
}

void rebuild_leak_sites(Analysis& a) {
  a.leaks.sites = leak_sites_of(a.sites, [&](PoolId pool) {
    const PoolStats* p = a.pool(pool);
    return p && p->upstream;
  });
}

}  // namespace memtrail::detail
