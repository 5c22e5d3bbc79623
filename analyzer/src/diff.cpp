#include "memtrail/diff.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>

#include "memtrail/report_json.hpp"
#include "memtrail/report_text.hpp"
#include "memtrail/size.hpp"
#include "python_frame_kinds.hpp"

namespace memtrail {

namespace {

std::uint64_t absdiff(std::uint64_t a, std::uint64_t b) {
  return a > b ? a - b : b - a;
}

std::string signed_size(std::uint64_t a, std::uint64_t b) {
  return (b >= a ? "+" : "-") + format_size(absdiff(a, b));
}

std::string signed_count(std::uint64_t a, std::uint64_t b) {
  return (b >= a ? "+" : "-") + std::to_string(absdiff(a, b));
}

}  // namespace

std::string site_match_key(const std::string& pool, const FrameList& frames) {
  // The interpreter's internals (python_frame_kinds.hpp) are one token, so
  // the same Python line stays one site.
  using detail::is_python_frame;
  const bool python = detail::has_python_frame(frames);
  std::string key = pool;
  bool in_internals = false;
  for (const Frame& f : frames) {
    if (detail::is_interpreter_internal(f, python)) {
      if (!in_internals) key += "\n" + std::string(detail::path_basename(f.module)) + "+?";
      in_internals = true;
      continue;
    }
    in_internals = false;
    key += '\n';
    if (is_python_frame(f)) {
      // A qualified name alone is not a Python frame's identity (every
      // module has a `<module>`); its file and line are.
      key += f.function + " at " + f.file + ":" + std::to_string(f.line);
    } else if (!f.function.empty()) {
      key += f.function;
    } else if (f.module.empty()) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "0x%" PRIx64, f.address);
      key += buf;
    } else {
      // Module offsets are stable across runs of the same binary (ASLR moves
      // the load address, not the offset); the directory may differ.
      key += detail::path_basename(f.module);
      char buf[32];
      std::snprintf(buf, sizeof buf, "+0x%" PRIx64, f.offset);
      key += buf;
    }
  }
  return key;
}

DiffResult diff_analyses(const Analysis& a, const Analysis& b) {
  DiffResult d;
  d.summary[0] = a.summary;
  d.summary[1] = b.summary;
  std::map<std::string, SiteDelta> sites;
  const Analysis* side[2] = {&a, &b};
  for (int k = 0; k < 2; ++k) {
    for (const Site& s : side[k]->sites) {
      const PoolStats* p = side[k]->pool(s.pool);
      if (p && p->upstream) continue;  // like top_sites: leaf pools only, no bytes twice
      std::string pool = p ? p->info.name : std::string();
      SiteDelta& sd = sites[site_match_key(pool, s.frames)];
      sd.pool = pool;
      if (k == 1 || sd.frames.empty()) sd.frames = s.frames;
      sd.leaked[k] += s.leaked;
      sd.peak_bytes[k] += s.peak_bytes;
      sd.calls[k] += s.calls;
      sd.bytes_allocated[k] += s.bytes_allocated;
    }
  }
  for (auto& [key, sd] : sites) {
    sd.impact = absdiff(sd.leaked[0].bytes, sd.leaked[1].bytes) +
                absdiff(sd.peak_bytes[0], sd.peak_bytes[1]);
    bool changed = sd.impact || sd.calls[0] != sd.calls[1] ||
                   sd.leaked[0].blocks != sd.leaked[1].blocks ||
                   sd.bytes_allocated[0] != sd.bytes_allocated[1];
    if (changed) d.sites.push_back(std::move(sd));
  }
  std::stable_sort(d.sites.begin(), d.sites.end(), [](const SiteDelta& x, const SiteDelta& y) {
    if (x.impact != y.impact) return x.impact > y.impact;
    return absdiff(x.calls[0], x.calls[1]) > absdiff(y.calls[0], y.calls[1]);
  });

  std::map<std::string, PoolDelta> pools;
  for (int k = 0; k < 2; ++k)
    for (const PoolStats& p : side[k]->pools) {
      PoolDelta& pd = pools[p.info.name];
      pd.name = p.info.name;
      pd.present[k] = true;
      pd.peak_used_bytes[k] = p.peak_used_bytes;
      pd.peak_reserved_bytes[k] = p.peak_reserved_bytes;
      pd.leaked_bytes[k] = p.leaked.bytes;
      pd.allocations[k] = p.allocations;
    }
  for (auto& [name, pd] : pools) {
    pd.impact = absdiff(pd.peak_used_bytes[0], pd.peak_used_bytes[1]) +
                absdiff(pd.peak_reserved_bytes[0], pd.peak_reserved_bytes[1]) +
                absdiff(pd.leaked_bytes[0], pd.leaked_bytes[1]);
    d.pools.push_back(pd);
  }
  std::stable_sort(d.pools.begin(), d.pools.end(),
                   [](const PoolDelta& x, const PoolDelta& y) { return x.impact > y.impact; });
  return d;
}

nlohmann::json to_diff_json(const DiffResult& d, std::size_t top) {
  using nlohmann::json;
  auto pair = [](const std::uint64_t v[2]) {
    return json{{"a", v[0]}, {"b", v[1]}, {"delta", static_cast<std::int64_t>(v[1] - v[0])}};
  };
  json j;
  j["schema"] = "memtrail.diff/1";
  const Summary& a = d.summary[0];
  const Summary& b = d.summary[1];
  std::uint64_t peak[2] = {a.peak_used_bytes, b.peak_used_bytes};
  std::uint64_t leaked[2] = {a.leaked.bytes, b.leaked.bytes};
  std::uint64_t blocks[2] = {a.leaked.blocks, b.leaked.blocks};
  std::uint64_t allocs[2] = {a.allocations, b.allocations};
  std::uint64_t temps[2] = {a.temporary_allocations, b.temporary_allocations};
  j["summary"] = {{"peak_used_bytes", pair(peak)},
                  {"leaked_bytes", pair(leaked)},
                  {"leaked_blocks", pair(blocks)},
                  {"allocations", pair(allocs)},
                  {"temporary_allocations", pair(temps)}};
  json sites = json::array();
  for (std::size_t i = 0; i < d.sites.size() && (top == 0 || i < top); ++i) {
    const SiteDelta& s = d.sites[i];
    const std::uint64_t leaked_bytes[2] = {s.leaked[0].bytes, s.leaked[1].bytes};
    const std::uint64_t leaked_blocks[2] = {s.leaked[0].blocks, s.leaked[1].blocks};
    sites.push_back({{"pool", s.pool},
                     {"impact", s.impact},
                     {"leaked_bytes", pair(leaked_bytes)},
                     {"leaked_blocks", pair(leaked_blocks)},
                     {"peak_bytes", pair(s.peak_bytes)},
                     {"calls", pair(s.calls)},
                     {"bytes_allocated", pair(s.bytes_allocated)},
                     {"stack", frames_to_json(s.frames)}});
  }
  j["sites"] = sites;
  json pools = json::array();
  for (const PoolDelta& p : d.pools)
    pools.push_back({{"name", p.name},
                     {"in_a", p.present[0]},
                     {"in_b", p.present[1]},
                     {"impact", p.impact},
                     {"peak_used_bytes", pair(p.peak_used_bytes)},
                     {"peak_reserved_bytes", pair(p.peak_reserved_bytes)},
                     {"leaked_bytes", pair(p.leaked_bytes)},
                     {"allocations", pair(p.allocations)}});
  j["pools"] = pools;
  return j;
}

std::string diff_text(const DiffResult& d, std::size_t top, std::size_t stack_depth) {
  std::string out;
  char buf[512];
  const Summary& a = d.summary[0];
  const Summary& b = d.summary[1];
  out += "SUMMARY (A -> B)\n";
  auto line = [&](const char* name, std::string va, std::string vb, std::string delta) {
    std::snprintf(buf, sizeof buf, "  %-22s %14s -> %-14s (%s)\n", name, va.c_str(), vb.c_str(),
                  delta.c_str());
    out += buf;
  };
  line("peak used", format_size(a.peak_used_bytes), format_size(b.peak_used_bytes),
       signed_size(a.peak_used_bytes, b.peak_used_bytes));
  line("leaked", format_size(a.leaked.bytes), format_size(b.leaked.bytes),
       signed_size(a.leaked.bytes, b.leaked.bytes));
  line("leaked blocks", std::to_string(a.leaked.blocks), std::to_string(b.leaked.blocks),
       signed_count(a.leaked.blocks, b.leaked.blocks));
  line("allocations", std::to_string(a.allocations), std::to_string(b.allocations),
       signed_count(a.allocations, b.allocations));
  line("temporary allocations", std::to_string(a.temporary_allocations),
       std::to_string(b.temporary_allocations),
       signed_count(a.temporary_allocations, b.temporary_allocations));

  if (!d.pools.empty()) {
    out += "\nPOOLS (A -> B)\n";
    for (const PoolDelta& p : d.pools) {
      std::snprintf(buf, sizeof buf,
                    "  %-16s peak used %s -> %s (%s), peak reserved %s -> %s (%s), leaked %s%s\n",
                    p.name.c_str(), format_size(p.peak_used_bytes[0]).c_str(),
                    format_size(p.peak_used_bytes[1]).c_str(),
                    signed_size(p.peak_used_bytes[0], p.peak_used_bytes[1]).c_str(),
                    format_size(p.peak_reserved_bytes[0]).c_str(),
                    format_size(p.peak_reserved_bytes[1]).c_str(),
                    signed_size(p.peak_reserved_bytes[0], p.peak_reserved_bytes[1]).c_str(),
                    signed_size(p.leaked_bytes[0], p.leaked_bytes[1]).c_str(),
                    !p.present[0]   ? " [only in B]"
                    : !p.present[1] ? " [only in A]"
                                    : "");
      out += buf;
    }
  }
  out += "\nSITES BY IMPACT (A -> B)\n";
  if (d.sites.empty()) out += "  no site changed\n";
  for (std::size_t i = 0; i < d.sites.size() && i < top; ++i) {
    const SiteDelta& s = d.sites[i];
    std::snprintf(buf, sizeof buf, "\n  leaked %s (%s blocks), peak %s, calls %s -> %s [%s]\n",
                  signed_size(s.leaked[0].bytes, s.leaked[1].bytes).c_str(),
                  signed_count(s.leaked[0].blocks, s.leaked[1].blocks).c_str(),
                  signed_size(s.peak_bytes[0], s.peak_bytes[1]).c_str(),
                  std::to_string(s.calls[0]).c_str(), std::to_string(s.calls[1]).c_str(),
                  s.pool.c_str());
    out += buf;
    out += format_stack(s.frames, stack_depth, "    ");
  }
  return out;
}

}  // namespace memtrail
