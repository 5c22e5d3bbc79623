// Site symbolization shared by analyze() and the session.
#include "symbolize_sites.hpp"

#include <memory>

#include "symbol_cache.hpp"

namespace memtrail::detail {

const ModuleInfo* module_of(const Analysis& a, std::uint64_t ip) {
  const ModuleInfo* best = nullptr;
  for (const auto& m : a.modules)
    if (ip >= m.start && ip < m.end && (!best || m.id > best->id)) best = &m;
  return best;
}

bool symbolize_sites(Analysis& a, const AnalysisOptions& options,
                     const std::function<bool(std::size_t done)>& progress) {
  Symbolizer sym;
  sym.set_enabled(options.symbolize);
  for (const auto& m : a.modules) sym.add_module(m);
  bool use_cache = options.symbolize && options.symbol_cache;
  std::unique_ptr<detail::SymbolCache> cache;
  if (use_cache) cache = std::make_unique<detail::SymbolCache>(a.path + ".symbols");
  bool stopped = false;
  for (std::size_t i = 0; i < a.sites.size(); ++i) {
    // Every 16 sites: a site costs at most a few DWARF lookups.
    if (progress && i % 16 == 0 && !progress(i)) {
      stopped = true;
      break;
    }
    Site& site = a.sites[i];
    site.frames.clear();
    for (std::uint64_t ip : a.stack_ips(site.stack)) {
      // Recorded ips are return addresses (unw_backtrace above the allocator
      // entry), so every one is looked up at ip-1.
      const ModuleInfo* m = cache ? module_of(a, ip) : nullptr;
      if (m && !m->build_id.empty()) {
        std::uint64_t offset = ip - m->load_address;
        if (const std::vector<Frame>* hit = cache->find(m->build_id, offset)) {
          for (Frame f : *hit) {
            f.module = m->path;
            f.address = ip;
            f.offset = offset;
            site.frames.push_back(std::move(f));
          }
          continue;
        }
        // Kept once the module was read, named or not: a nameless address
        // (local code of a stripped library) would otherwise open it through
        // libdw again on every run (with the debuginfod client: ~20M
        // instructions). A module that could not be read is not kept, so its
        // warning comes back each run.
        const auto& frames = sym.resolve(ip, true);
        if (!frames.empty() && sym.read_module_of(ip)) cache->add(m->build_id, offset, frames);
        site.frames.insert(site.frames.end(), frames.begin(), frames.end());
        continue;
      }
      const auto& frames = sym.resolve(ip, true);
      site.frames.insert(site.frames.end(), frames.begin(), frames.end());
    }
  }
  a.symbol_warnings = sym.warnings();
  if (cache) cache->save();
  if (!stopped && progress) stopped = !progress(a.sites.size());
  return !stopped;
}

}  // namespace memtrail::detail
