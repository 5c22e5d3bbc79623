// The verdicts of `memtrail check`: each configured limit becomes one
// CheckItem that says the limit, the measured value and, when it failed,
// the sites responsible with their symbolized stacks.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>

#include "memtrail/check.hpp"
#include "memtrail/report_text.hpp"
#include "memtrail/size.hpp"

namespace memtrail {

namespace {

// "6885 bytes (6.72 KiB)": exact for tests and scripts, readable for people.
std::string bytes_text(std::uint64_t n) {
  std::string s = count_text(n, "byte");
  if (n >= 1024) s += " (" + format_size(n) + ")";
  return s;
}

std::string blocks_text(std::uint64_t n) {
  return count_text(n, "block");
}

const char* kind_name(LeakClass k) {
  switch (k) {
    case LeakClass::indirect:
      return "Indirect";
    case LeakClass::reachable:
      return "Reachable";
    case LeakClass::possible:
      return "Possible";
    default:
      return "Direct";
  }
}

struct UnsuppressedLeak {
  const LeakSite* leak;
  const Site* site;
};

double limit_with_tolerance(std::uint64_t base, double tolerance_percent) {
  return static_cast<double>(base) * (1.0 + tolerance_percent / 100.0);
}

bool names_pool(const CheckConfig& config, const std::string& pool) {
  return config.pools.empty() ||
         std::find(config.pools.begin(), config.pools.end(), pool) != config.pools.end();
}

// One `memtrail check`: each step adds the items of one kind of limit to `r`.
class CheckRun {
 public:
  CheckRun(const Analysis& a, const CheckConfig& config) : a_(a), config_(config) {}

  // Leaks after suppressions, largest first (a.leaks.sites is sorted); each
  // rule counts what it suppressed.
  void apply_suppressions(SuppressionSet& suppressions) {
    for (auto& rule : suppressions.rules) {
      rule.sites = 0;
      rule.suppressed = {};
    }
    for (const LeakSite& ls : a_.leaks.sites) {
      if (!config_.leak_kinds.has(ls.kind)) continue;
      const Site& site = at(a_.sites, ls.site);
      int rule = suppressions.match(site.frames);
      if (rule >= 0) {
        Suppression& s = suppressions.rules[static_cast<std::size_t>(rule)];
        s.sites += 1;
        s.suppressed += ls.tally;
        r.suppressed += ls.tally;
        continue;
      }
      r.leaked += ls.tally;
      leaks_.push_back({&ls, &site});
    }
    r.peak_used_bytes = a_.summary.peak_used_bytes;
  }

  // With nothing configured, any leak fails (LeakSanitizer's default).
  void check_leak_limits(const Baseline* baseline) {
    bool nothing_configured = !config_.max_leaked_bytes && !config_.max_leaked_blocks &&
                              !config_.max_peak_bytes && !config_.max_reserved_bytes && !baseline &&
                              !config_.max_scope_growth;
    std::optional<std::uint64_t> max_leaked = config_.max_leaked_bytes;
    if (nothing_configured) max_leaked = 0;
    std::string suppressed_note = r.suppressed.bytes
                                      ? "; " + bytes_text(r.suppressed.bytes) + " in " +
                                            blocks_text(r.suppressed.blocks) + " suppressed"
                                      : "";
    if (max_leaked) {
      CheckItem item;
      item.name = "leaked-bytes";
      item.passed = r.leaked.bytes <= *max_leaked;
      item.summary = "leaked " + bytes_text(r.leaked.bytes) + " in " +
                     blocks_text(r.leaked.blocks) + "; limit " + bytes_text(*max_leaked) +
                     suppressed_note;
      if (!item.passed) item.details = leak_details();
      r.items.push_back(std::move(item));
    }
    if (config_.max_leaked_blocks) {
      CheckItem item;
      item.name = "leaked-blocks";
      item.passed = r.leaked.blocks <= *config_.max_leaked_blocks;
      item.summary = "leaked " + blocks_text(r.leaked.blocks) + " (" + bytes_text(r.leaked.bytes) +
                     "); limit " + blocks_text(*config_.max_leaked_blocks) + suppressed_note;
      if (!item.passed) item.details = leak_details();
      r.items.push_back(std::move(item));
    }
  }

  void check_peak_limits() {
    if (!config_.max_peak_bytes) return;
    if (config_.pools.empty()) {
      CheckItem item;
      item.name = "peak-used";
      item.passed = a_.summary.peak_used_bytes <= *config_.max_peak_bytes;
      item.summary = "peak used " + bytes_text(a_.summary.peak_used_bytes) + "; limit " +
                     bytes_text(*config_.max_peak_bytes);
      if (!item.passed) item.details = peak_details(std::nullopt);
      r.items.push_back(std::move(item));
      return;
    }
    for (const std::string& name : config_.pools) {
      const PoolStats* p = a_.pool_by_name(name);
      CheckItem item;
      item.name = "peak-used[" + name + "]";
      std::uint64_t peak = p ? p->peak_used_bytes : 0;
      item.passed = peak <= *config_.max_peak_bytes;
      item.summary = "pool '" + name + "' peak used " + bytes_text(peak) + "; limit " +
                     bytes_text(*config_.max_peak_bytes) + (p ? "" : " (pool not in the trace)");
      if (!item.passed) item.details = peak_details(PoolId{p->info.id});
      r.items.push_back(std::move(item));
    }
  }

  void check_reserved_limits() {
    if (!config_.max_reserved_bytes) return;
    for (const PoolStats& p : a_.pools) {
      if (!names_pool(config_, p.info.name)) continue;
      CheckItem item;
      item.name = "peak-reserved[" + p.info.name + "]";
      item.passed = p.peak_reserved_bytes <= *config_.max_reserved_bytes;
      item.summary = "pool '" + p.info.name + "' peak reserved " +
                     bytes_text(p.peak_reserved_bytes) + "; limit " +
                     bytes_text(*config_.max_reserved_bytes);
      if (!item.passed)
        item.details = "  reserved is held by " + std::to_string(p.segment_reserves) +
                       " segment reserves; peak used was " + bytes_text(p.peak_used_bytes) + "\n";
      r.items.push_back(std::move(item));
    }
  }

  // New leak sites always fail; known ones may not grow.
  void check_baseline_leaks(const Baseline& baseline) {
    std::map<std::string, const BaselineSite*> known;
    for (const auto& s : baseline.leaks) known[s.key] = &s;
    std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> now;  // key -> bytes, blocks
    std::map<std::string, std::vector<const UnsuppressedLeak*>> by_key;
    for (const auto& l : leaks_) {
      std::string key = site_key(l.site->frames);
      now[key].first += l.leak->tally.bytes;
      now[key].second += l.leak->tally.blocks;
      by_key[key].push_back(&l);
    }
    CheckItem item;
    item.name = "baseline-leak-sites";
    std::size_t new_sites = 0, grown = 0;
    std::string d;
    for (const auto& [key, v] : now) {
      auto it = known.find(key);
      bool is_new = it == known.end();
      if (!is_new && v.first <= it->second->leaked.bytes) continue;
      (is_new ? new_sites : grown) += 1;
      d += is_new ? "  New leak site: " + bytes_text(v.first) + " in " + blocks_text(v.second) +
                        ", allocated from:\n"
                  : "  Leak grew from " + bytes_text(it->second->leaked.bytes) + " to " +
                        bytes_text(v.first) + ", allocated from:\n";
      d += format_stack(by_key[key].front()->site->frames, config_.frames_per_site, "    ",
                        StackStyle::numbered);
    }
    item.passed = new_sites == 0 && grown == 0;
    item.summary = std::to_string(now.size()) + " leak sites, " + std::to_string(new_sites) +
                   " new and " + std::to_string(grown) + " grown since the baseline (" +
                   std::to_string(baseline.leaks.size()) + " sites)";
    item.details = d;
    r.items.push_back(std::move(item));
  }

  // Peaks may grow by the tolerance over the baseline's, overall and per pool.
  void check_baseline_peaks(const Baseline& baseline) {
    if (config_.pools.empty()) {
      std::size_t i = peak_item("baseline-peak-used", "peak used", a_.summary.peak_used_bytes,
                                baseline.peak_used_bytes);
      if (!r.items[i].passed) r.items[i].details = peak_details(std::nullopt);
    }
    for (const auto& bp : baseline.pools) {
      const PoolStats* p = a_.pool_by_name(bp.name);
      if (!p || !names_pool(config_, bp.name)) continue;
      std::size_t i =
          peak_item("baseline-peak-used[" + bp.name + "]", "pool '" + bp.name + "' peak used",
                    p->peak_used_bytes, bp.peak_used_bytes);
      if (!r.items[i].passed) r.items[i].details = peak_details(PoolId{p->info.id});
      peak_item("baseline-peak-reserved[" + bp.name + "]", "pool '" + bp.name + "' peak reserved",
                p->peak_reserved_bytes, bp.peak_reserved_bytes);
    }
  }

  CheckResult r;

 private:
  std::string leak_details() const {
    std::string d;
    std::size_t shown = 0;
    for (const auto& l : leaks_) {
      if (shown++ == config_.top_sites) {
        d += "  ... more leak sites (raise --top to see them)\n";
        break;
      }
      d += "  " + std::string(kind_name(l.leak->kind)) + " leak of " +
           bytes_text(l.leak->tally.bytes) + " in " + blocks_text(l.leak->tally.blocks) +
           " allocated from:\n";
      d += format_stack(l.site->frames, config_.frames_per_site, "    ", StackStyle::numbered);
    }
    return d;
  }

  // Sites with the most bytes live at the peak, optionally of one pool.
  std::string peak_details(std::optional<PoolId> pool) const {
    std::string d;
    std::size_t shown = 0;
    for (SiteId i : top_sites(a_, SiteOrder::peak, 0)) {
      const Site& s = at(a_.sites, i);
      if (pool && s.pool != *pool) continue;
      if (shown++ == config_.top_sites) break;
      d += "  " + bytes_text(s.peak_bytes) + " live at the peak, allocated from:\n";
      d += format_stack(s.frames, config_.frames_per_site, "    ", StackStyle::numbered);
    }
    return d;
  }

  // Adds one baseline peak item; returns its index in r.items.
  std::size_t peak_item(const std::string& name, const std::string& what, std::uint64_t measured,
                        std::uint64_t base) {
    CheckItem i;
    i.name = name;
    double limit = limit_with_tolerance(base, config_.tolerance_percent);
    i.passed = static_cast<double>(measured) <= limit;
    char tol[32];
    std::snprintf(tol, sizeof tol, "%g%%", config_.tolerance_percent);
    i.summary = what + " " + bytes_text(measured) + "; baseline " + bytes_text(base) + " + " + tol +
                " tolerance";
    r.items.push_back(std::move(i));
    return r.items.size() - 1;
  }

  const Analysis& a_;
  const CheckConfig& config_;
  std::vector<UnsuppressedLeak> leaks_;
};

}  // namespace

bool CheckResult::passed() const {
  return failures() == 0;
}

std::size_t CheckResult::failures() const {
  return static_cast<std::size_t>(
      std::count_if(items.begin(), items.end(), [](const CheckItem& i) { return !i.passed; }));
}

CheckResult run_check(const Analysis& a, const CheckConfig& config, SuppressionSet& suppressions,
                      const Baseline* baseline) {
  CheckRun run(a, config);
  run.apply_suppressions(suppressions);
  run.check_leak_limits(baseline);
  run.check_peak_limits();
  run.check_reserved_limits();
  if (std::optional<CheckItem> lost = check_lost_events(a, config.accept_lost_events))
    run.r.items.push_back(std::move(*lost));
  if (config.max_scope_growth)
    run.r.items.push_back(check_scope_growth(a, *config.max_scope_growth, config.frames_per_site));
  if (baseline) {
    run.check_baseline_leaks(*baseline);
    run.check_baseline_peaks(*baseline);
  }
  return std::move(run.r);
}

std::string format_check_text(const CheckResult& r, const SuppressionSet& suppressions) {
  std::string out;
  for (const CheckItem& item : r.items) {
    out += (item.passed ? "PASS " : "FAIL ") + item.name + ": " + item.summary + "\n";
    if (!item.passed) out += item.details;
  }
  bool any_used = false;
  for (const auto& s : suppressions.rules) any_used |= s.sites > 0;
  if (any_used) {
    out += "Suppressions used:\n  count      bytes template\n";
    for (const auto& s : suppressions.rules) {
      if (s.sites == 0) continue;
      char line[64];
      std::snprintf(line, sizeof line, "  %5" PRIu64 " %10" PRIu64 " ", s.sites,
                    s.suppressed.bytes);
      out += line + s.text() + " (" + s.origin + ")\n";
    }
  }
  std::size_t failed = r.failures(), total = r.items.size();
  std::string limits = count_text(total, "limit");
  out += failed
             ? "memtrail check: FAILED, " + std::to_string(failed) + " of " + limits + " exceeded\n"
             : "memtrail check: passed, " + limits + " checked\n";
  return out;
}

}  // namespace memtrail
