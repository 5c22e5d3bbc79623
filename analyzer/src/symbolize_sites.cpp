// Site symbolization shared by analyze() and the session.
#include "symbolize_sites.hpp"

#include <malloc.h>

#include <cstdlib>
#include <memory>
#include <utility>

#include "stack_chains.hpp"
#include "symbol_cache.hpp"

namespace memtrail::detail {

const ModuleInfo* module_of(const Analysis& a, std::uint64_t ip) {
  const ModuleInfo* best = nullptr;
  for (const auto& m : a.modules)
    if (ip >= m.start && ip < m.end && (!best || m.id > best->id)) best = &m;
  return best;
}

Frame python_frame(const Analysis& a, std::uint64_t ip) {
  Frame f;
  f.address = ip;
  f.module = "python";
  auto it = a.python_frames.find(python_frame_string(ip));
  if (it == a.python_frames.end()) return f;
  // "function\x1ffile\x1fline"
  const std::string& text = it->second;
  std::size_t a_end = text.find('\x1f');
  std::size_t f_end = a_end == std::string::npos ? a_end : text.find('\x1f', a_end + 1);
  f.function = text.substr(0, a_end);
  if (f_end == std::string::npos) return f;
  f.file = text.substr(a_end + 1, f_end - a_end - 1);
  f.line = static_cast<std::uint32_t>(std::strtoul(text.c_str() + f_end + 1, nullptr, 10));
  return f;
}

namespace {

// The frames of one recorded ip: the symbol cache first, then DWARF.
// Recorded ips are return addresses (unw_backtrace above the allocator
// entry), so every one is looked up at ip-1.
std::vector<Frame> resolve_ip(const Analysis& a, Symbolizer& sym, SymbolCache* cache,
                              std::uint64_t ip) {
  if (is_python_frame(ip)) return {python_frame(a, ip)};
  const ModuleInfo* m = cache ? module_of(a, ip) : nullptr;
  if (!m || m->build_id.empty()) return sym.resolve(ip, true);
  std::uint64_t offset = ip - m->load_address;
  if (const std::vector<Frame>* hit = cache->find(m->build_id, offset)) {
    std::vector<Frame> out = *hit;
    for (Frame& f : out) {
      f.module = m->path;
      f.address = ip;
      f.offset = offset;
    }
    return out;
  }
  // Kept once the module was read, named or not: a nameless address (local
  // code of a stripped library) would otherwise open it through libdw again
  // on every run (with the debuginfod client: ~20M instructions). A module
  // that could not be read is not kept, so its warning comes back each run.
  const auto& frames = sym.resolve(ip, true);
  if (!frames.empty() && sym.read_module_of(ip)) cache->add(m->build_id, offset, frames);
  return frames;
}

}  // namespace

bool symbolize_sites(Analysis& a, const AnalysisOptions& options,
                     const std::function<bool(std::size_t done)>& progress,
                     std::vector<OpenedModule> preopened) {
  auto sym = std::make_unique<Symbolizer>();
  sym->set_enabled(options.symbolize);
  sym->adopt_preopened(std::move(preopened));
  for (const auto& m : a.modules) sym->add_module(m);
  bool use_cache = options.symbolize && options.symbol_cache;
  std::unique_ptr<SymbolCache> cache;
  if (use_cache) cache = std::make_unique<SymbolCache>(a.path + ".symbols");
  // Frames depend on the ip only: each distinct ip is resolved and stored
  // once, and sites keep indices (frame.hpp), not copies.
  auto table = std::make_shared<FrameTable>();
  a.frame_table = table;
  // Pass 1 resolves every ip and counts the frames; pass 2 lays the sites'
  // index runs into an array of exactly that size (grown by doubling, its
  // copy was the load's peak at 10^5 stacks).
  // Sites share stack prefixes: each node's chain is walked once per pass.
  StackChains chains(a);
  bool stopped = false;
  std::size_t total = 0;
  for (std::size_t i = 0; i < a.sites.size(); ++i) {
    // Every 16 sites: a site costs at most a few DWARF lookups.
    if (progress && i % 16 == 0 && !progress(i)) {
      stopped = true;
      break;
    }
    total += chains.count(a.sites[i].stack, [&](std::uint64_t ip) {
      const FrameTable::Run* found = table->find(ip);
      return found ? *found : table->intern(ip, resolve_ip(a, *sym, cache.get(), ip));
    });
  }
  // Every ip is resolved: the symbolizer goes before pass 2. Its modules'
  // DWARF (libelf's decompressed sections: 10 MiB on distinct-stacks-1e5)
  // was still held while pass 2 laid the index array out (12 MiB at 10^5
  // sites, a fresh mmap): the GUI's peak on a trace with no symbol cache yet.
  // Freed pages stay resident until reused, so they are given back too.
  a.symbol_warnings = sym->warnings();
  sym.reset();
  if (cache) cache->save();
  cache.reset();
  if (options.symbolize) malloc_trim(0);
  if (!stopped) {
    table->lists.reserve(total);
    for (Site& site : a.sites) {
      const auto first = static_cast<std::uint32_t>(table->lists.size());
      chains.lay(site.stack, *table);
      const auto count = static_cast<std::uint32_t>(table->lists.size()) - first;
      site.frames = FrameList(table, first, count);
    }
  }
  if (!stopped && progress) stopped = !progress(a.sites.size());
  return !stopped;
}

}  // namespace memtrail::detail
