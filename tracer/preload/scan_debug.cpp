// MEMTRAIL_SCAN_DEBUG's report (scan_debug.hpp).
#include "scan_debug.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "memtrail/detail/diagnostics.hpp"
#include "memtrail/detail/environment.hpp"

namespace memtrail::preload {
namespace {

// The /proc/self/maps line that holds `address`, without its newline.
std::string maps_line(const std::string& maps, std::uint64_t address) {
  for (std::size_t at = 0; at < maps.size();) {
    std::size_t newline = maps.find('\n', at);
    if (newline == std::string::npos) newline = maps.size();
    char* end = nullptr;
    std::uint64_t begin = std::strtoull(maps.c_str() + at, &end, 16);
    std::uint64_t stop = std::strtoull(end + 1, nullptr, 16);
    if (address >= begin && address < stop) return maps.substr(at, newline - at);
    at = newline + 1;
  }
  return "(no mapping)";
}

bool g_scan_debug = false;

std::string hex(std::uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "%#llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

void init_scan_debug() {
  const char* value = std::getenv("MEMTRAIL_SCAN_DEBUG");
  g_scan_debug = value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
}

ScanDebug::ScanDebug() : on_(g_scan_debug) {}

void ScanDebug::label(const char* what, std::uint64_t tid, std::span<const MemoryRange> ranges) {
  if (!on_) return;
  for (const MemoryRange& r : ranges) labels_.push_back({r, what, tid});
}

void ScanDebug::report(std::span<const HeapBlock> blocks, std::span<const LeakClass> classes,
                       std::span<const PossibleCause> causes, const std::string& maps,
                       PythonDataWords& python) const {
  if (!on_) return;
  for (std::size_t i = 0; i < blocks.size() && i < causes.size(); ++i) {
    if (classes[i] != LeakClass::possible) continue;
    const PossibleCause& c = causes[i];
    const char* what = "block";
    std::uint64_t tid = 0;
    if (c.root >= 0) {
      what = "root";
      for (const Labelled& l : labels_)
        if (c.at >= l.range.begin && c.at < l.range.end) {
          what = l.what;
          tid = l.tid;
        }
    }
    std::string where =
        c.block >= 0 ? "block " + hex(blocks[c.block].address)
                     : std::string(what) + (tid != 0 ? " (tid " + std::to_string(tid) + ")" : "");
    // In CPython: the pymalloc block or the object the pointer lay in.
    const std::string object =
        c.block >= 0 ? python.describe_block(blocks[c.block]) : python.describe(c.at);
    if (!object.empty()) where += ": " + object;
    detail::diagnostic(
        "memtrail: scan debug: block %#llx (%llu B) possibly lost: pointer %#llx at %#llx in %s "
        "[%s]\n",
        static_cast<unsigned long long>(blocks[i].address),
        static_cast<unsigned long long>(blocks[i].size), static_cast<unsigned long long>(c.value),
        static_cast<unsigned long long>(c.at), where.c_str(), maps_line(maps, c.at).c_str());
  }
}

void ScanDebug::report_data_words(std::span<const HeapBlock> blocks,
                                  std::span<const DataWordNote> notes,
                                  const std::string& maps) const {
  if (!on_) return;
  for (const DataWordNote& n : notes) {
    const HeapBlock* into = nullptr;
    for (const HeapBlock& b : blocks)
      if (n.value >= b.address && n.value < b.address + b.size) into = &b;
    std::string where = n.pool_block != 0 ? " of " + std::string(n.free ? "a free " : "a ") +
                                                std::to_string(n.pool_block) +
                                                " B pymalloc block at " + hex(n.object)
                        : n.object != 0 ? " of the malloc'd block at " + hex(n.object)
                                        : "";  // a root word
    detail::diagnostic(
        "memtrail: scan debug: word %#llx at %#llx (inside block %#llx, %llu B) not followed: "
        "%s%s [%s]\n",
        static_cast<unsigned long long>(n.value), static_cast<unsigned long long>(n.at),
        static_cast<unsigned long long>(into ? into->address : 0),
        static_cast<unsigned long long>(into ? into->size : 0), n.what, where.c_str(),
        maps_line(maps, n.at).c_str());
  }
}

}  // namespace memtrail::preload
