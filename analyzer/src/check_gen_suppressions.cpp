// Generated `leak:` suppressions for failing leak sites (gen_suppressions.hpp).
#include <set>
#include <string_view>

#include "memtrail/gen_suppressions.hpp"
#include "memtrail/size.hpp"

namespace memtrail {

namespace {

std::string_view basename_of(std::string_view path) {
  std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Frames that allocate for their caller (the C and C++ runtimes' code:
// strdup's malloc, a std::string's operator new): a rule naming them would
// suppress every leak made through them.
bool is_allocation_machinery(const Frame& frame) {
  std::string_view module = basename_of(frame.module);
  if (module.starts_with("libc.so") || module.starts_with("libstdc++.so") ||
      module.starts_with("ld-linux") || module.starts_with("libmemtrail"))
    return true;
  std::string_view f = frame.function;
  for (std::string_view name :
       {"malloc", "calloc", "realloc", "reallocarray", "free", "posix_memalign", "aligned_alloc",
        "memalign", "valloc", "pvalloc", "strdup", "strndup"})
    if (f == name) return true;
  return f.starts_with("operator new") || f.starts_with("operator delete") ||
         f.starts_with("__libc_") || f.starts_with("__GI_");
}

bool leak_limit_failed(const CheckResult& result) {
  for (const CheckItem& item : result.items)
    if (!item.passed && (item.name == "leaked-bytes" || item.name == "leaked-blocks")) return true;
  return false;
}

}  // namespace

std::string suppression_for(const FrameList& frames) {
  for (const Frame& f : frames)
    if (!f.function.empty() && !is_allocation_machinery(f)) return "leak:^" + f.function + "$";
  for (const Frame& f : frames)
    if (!f.module.empty() && !is_allocation_machinery(f))
      return "leak:^" + std::string(basename_of(f.module)) + "$";
  // Only the runtimes' frames: the innermost names it, broad as that is.
  for (const Frame& f : frames) {
    if (!f.function.empty()) return "leak:^" + f.function + "$";
    if (!f.module.empty()) return "leak:^" + std::string(basename_of(f.module)) + "$";
  }
  return "";
}

std::string generate_suppressions(const Analysis& a, const CheckConfig& config,
                                  const SuppressionSet& suppressions, const CheckResult& result) {
  if (!leak_limit_failed(result)) return "";
  std::string out = "# memtrail check --gen-suppressions: a rule per failing leak site\n";
  std::set<std::string> written;
  for (const LeakSite& ls : a.leaks.sites) {
    if (!config.leak_kinds.has(ls.kind)) continue;
    const Site& site = at(a.sites, ls.site);
    if (suppressions.match(site.frames) >= 0) continue;
    std::string rule = suppression_for(site.frames);
    std::string what = std::string(to_string(ls.kind)) + " leak of " +
                       std::to_string(ls.tally.bytes) + " bytes in " +
                       count_text(ls.tally.blocks, "block");
    if (rule.empty()) {
      out += "# " + what + ": no stack recorded, no rule can name it\n";
    } else if (written.insert(rule).second) {
      out += "# " + what + (site.frames.empty() ? "" : " from " + site.frames.front().describe()) +
             "\n" + rule + "\n";
    }
  }
  return out;
}

}  // namespace memtrail
