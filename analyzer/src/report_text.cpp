#include "memtrail/report_text.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "memtrail/report_chart.hpp"
#include "memtrail/site_caller.hpp"
#include "memtrail/size.hpp"

namespace memtrail {

namespace {

std::string fmt(const char* f, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, f, args...);
  return buf;
}

std::string count(std::uint64_t n) {
  return std::to_string(n);
}

// "1 block", "3 blocks".
std::string blocks(std::uint64_t n) {
  return count_text(n, "block");
}

std::uint64_t series_max(const Series& s) {
  std::uint64_t m = 0;
  for (auto v : s.value) m = std::max(m, v);
  return m;
}

// One-line lists name the first frame outside the allocation machinery.
std::string site_title(const Analysis& a, const Site& s) {
  std::string where = caller_text(s.frames);
  const PoolStats* p = a.pool(s.pool);
  if (p && a.pools.size() > 1) where += "  [" + p->info.name + "]";
  return where;
}

void histogram_section(std::string& out, const char* title, const Histogram& h, bool sizes) {
  std::uint64_t total = 0, max = 0;
  for (auto c : h.counts) {
    total += c;
    max = std::max(max, c);
  }
  if (total == 0) return;
  out += fmt("\n%s\n", title);
  for (std::size_t i = 0; i < h.counts.size(); ++i) {
    if (!h.counts[i]) continue;
    std::string low =
        sizes ? format_size(Histogram::bucket_low(i)) : format_duration(Histogram::bucket_low(i));
    int bar =
        static_cast<int>(40.0 * static_cast<double>(h.counts[i]) / static_cast<double>(max) + 0.5);
    out += fmt("  >= %-12s %12" PRIu64 "  %s\n", low.c_str(), h.counts[i],
               std::string(bar, '#').c_str());
  }
}

}  // namespace

std::string format_duration(std::uint64_t ns) {
  if (ns < 1000) return fmt("%" PRIu64 " ns", ns);
  if (ns < 1000000) return fmt("%.2f us", ns / 1e3);
  if (ns < 1000000000) return fmt("%.2f ms", ns / 1e6);
  return fmt("%.3f s", ns / 1e9);
}

std::string format_stack(const FrameList& frames, std::size_t depth, const std::string& indent,
                         StackStyle style) {
  std::string out;
  for (std::size_t i = 0; i < frames.size() && i < depth; ++i)
    out += indent + (style == StackStyle::numbered ? fmt("#%zu ", i) : std::string()) +
           frames[i].describe() + "\n";
  if (frames.size() > depth) out += indent + fmt("... %zu more frames\n", frames.size() - depth);
  if (frames.empty()) out += indent + "(no stack recorded)\n";
  return out;
}

namespace {

// The trace, the command and the time range the report covers.
std::string header_text(const Analysis& a) {
  std::string out;
  out += fmt("memtrail report: %s\n", a.path.c_str());
  if (!a.header.command_line.empty())
    out += fmt("command: %s (pid %u)\n", a.header.command_line.c_str(), a.header.pid);
  if (a.ended_by_signal != 0)
    out += fmt("ended by signal %s (%d)\n", a.ended_by_signal_name.c_str(), a.ended_by_signal);
  const AnalysisOptions& opt = a.options;
  if (opt.from_ns != 0 || opt.to_ns != kTimeMax || !opt.from_mark.empty() || !opt.to_mark.empty())
    out += fmt("range: %s .. %s\n", format_duration(a.range_from_ns).c_str(),
               a.range_to_ns == kTimeMax ? "end" : format_duration(a.range_to_ns).c_str());
  return out;
}

// Totals of the whole trace (or range), and what the trace cannot tell.
std::string summary_section(const Analysis& a) {
  std::string out;
  const Summary& s = a.summary;
  out += "\nSUMMARY\n";
  out += fmt("  duration               %s\n", format_duration(s.duration_ns).c_str());
  out += fmt("  events                 %s\n", count(s.events).c_str());
  out += fmt("  allocations            %s (%s)\n", count(s.allocations).c_str(),
             format_size(s.bytes_allocated).c_str());
  out += fmt("  frees                  %s\n", count(s.frees).c_str());
  out += fmt("  temporary allocations  %s\n", count(s.temporary_allocations).c_str());
  out += fmt("  peak used              %s at %s\n", format_size(s.peak_used_bytes).c_str(),
             format_duration(s.peak_time_ns).c_str());
  out += fmt(a.attached ? "  live at detach         %s in %s (not leak-checked)\n"
                        : "  leaked                 %s in %s\n",
             format_size(s.leaked.bytes).c_str(), blocks(s.leaked.blocks).c_str());
  if (s.samples) {
    out += fmt("  peak RSS               %s (%s samples)\n", format_size(s.peak_rss_bytes).c_str(),
               count(s.samples).c_str());
    if (series_max(a.samples.heap_reserved) > 0)  // 0: the heap was not glibc's
      out += fmt("  system heap (glibc)    peak in use %s, peak reserved %s\n",
                 format_size(series_max(a.samples.heap_used)).c_str(),
                 format_size(series_max(a.samples.heap_reserved)).c_str());
  }
  for (const LostEvents& l : a.lost_events)
    out += fmt("  lost events            %s not in this trace (%s)\n", count(l.count).c_str(),
               l.words.c_str());
  if (!a.read.complete)
    out +=
        "  lost events            those after the last whole chunk: no end-of-trace marker "
        "(the program ended without exit handlers, or was killed)\n";
  if (a.attached)
    out +=
        fmt("  attached               to a running process: blocks allocated before are "
            "unknown (%s frees of them)\n",
            count(s.unmatched_frees).c_str());
  else if (s.unmatched_frees || s.late_matched_frees || s.replaced_blocks)
    out += fmt("  unmatched frees        %s (late-matched %s, lost frees %s)\n",
               count(s.unmatched_frees).c_str(), count(s.late_matched_frees).c_str(),
               count(s.replaced_blocks).c_str());
  return out;
}

// Leak totals by class, then the top leak sites of the kinds asked for.
std::string leaks_section(const Analysis& a, const TextReportOptions& o) {
  std::string out;
  const Leaks& l = a.leaks;
  out += "\nLEAKS";
  if (l.classified)
    out += " (classified at exit by reachability)\n";
  else if (l.ended_at_exec)
    out +=
        fmt(" (the image was replaced by exec: not classified, as Valgrind does not; %s in %s were "
            "live then)\n",
            format_size(l.exec_replaced.bytes).c_str(), blocks(l.exec_replaced.blocks).c_str());
  else if (a.attached)
    out +=
        " (attached: not classified; every block allocated in the window and live at the "
        "end counts as direct)\n";
  else if (a.ended_by_signal != 0)
    out += fmt(" (ended by %s, not classified: every block live at the end counts as direct)\n",
               a.ended_by_signal_name.c_str());
  else
    out += " (no reachability data: every block live at the end counts as direct)\n";
  out += fmt("  direct     %12s in %s\n", format_size(l.direct.bytes).c_str(),
             blocks(l.direct.blocks).c_str());
  out += fmt("  indirect   %12s in %s\n", format_size(l.indirect.bytes).c_str(),
             blocks(l.indirect.blocks).c_str());
  if (l.possible.blocks > 0)
    out += fmt("  possible   %12s in %s (only interior pointers reach them)\n",
               format_size(l.possible.bytes).c_str(), blocks(l.possible.blocks).c_str());
  out += fmt("  reachable  %12s in %s (not leaks)\n", format_size(l.reachable.bytes).c_str(),
             blocks(l.reachable.blocks).c_str());
  if (l.runtime.blocks > 0)
    out += fmt("  runtime    %12s in %s (the C/C++ runtime's own: ld.so, libstdc++'s pool)\n",
               format_size(l.runtime.bytes).c_str(), blocks(l.runtime.blocks).c_str());
  std::size_t shown = 0;
  for (const LeakSite& ls : l.sites) {
    if (!o.leak_kinds.has(ls.kind)) continue;
    if (shown++ >= o.top) break;
    const Site& site = at(a.sites, ls.site);
    out += fmt("\n  %s leak: %s in %s%s\n", std::string(to_string(ls.kind)).c_str(),
               format_size(ls.tally.bytes).c_str(), blocks(ls.tally.blocks).c_str(),
               a.pools.size() > 1 && a.pool(site.pool)
                   ? (" [" + a.pool(site.pool)->info.name + "]").c_str()
                   : "");
    out += format_stack(site.frames, o.stack_depth, "    ");
  }
  return out;
}

// The top sites four ways: peak contribution, calls, bytes, temporaries.
std::string top_sites_sections(const Analysis& a, const TextReportOptions& o) {
  std::string out;
  struct List {
    const char* title;
    SiteOrder order;
  };
  for (List list : {List{"TOP SITES BY PEAK CONTRIBUTION", SiteOrder::peak},
                    List{"TOP SITES BY ALLOCATIONS", SiteOrder::calls},
                    List{"TOP SITES BY BYTES ALLOCATED", SiteOrder::bytes},
                    List{"TOP SITES BY TEMPORARY ALLOCATIONS", SiteOrder::temporaries}}) {
    auto idx = top_sites(a, list.order, o.top);
    if (idx.empty()) continue;
    out += fmt("\n%s\n", list.title);
    for (SiteId i : idx) {
      const Site& site = at(a.sites, i);
      out += fmt("  %10s calls %12s allocated %12s at peak %10s temporary  %s\n",
                 count(site.calls).c_str(), format_size(site.bytes_allocated).c_str(),
                 format_size(site.peak_bytes).c_str(), count(site.temporaries).c_str(),
                 site_title(a, site).c_str());
      out += format_stack(site.frames, o.stack_depth, "      ");
    }
  }
  return out;
}

// Per pool: peaks, final state, reuse and fragmentation.
std::string pools_section(const Analysis& a) {
  std::string out;
  if (!a.pools.empty()) {
    out += "\nPOOLS\n";
    out +=
        fmt("  %-16s %-9s %-7s %12s %12s %12s %12s %10s %7s %8s\n", "name", "kind", "space",
            "peak used", "peak resvd", "final used", "final resvd", "allocs", "reuse", "segments");
    for (const PoolStats& p : a.pools) {
      out += fmt(
          "  %-16s %-9s %-7s %12s %12s %12s %12s %10s %6.1f%% %8s\n", p.info.name.c_str(),
          std::string(to_string(p.info.kind)).c_str(), std::string(to_string(p.info.space)).c_str(),
          format_size(p.peak_used_bytes).c_str(), format_size(p.peak_reserved_bytes).c_str(),
          format_size(p.final_used_bytes).c_str(), format_size(p.final_reserved_bytes).c_str(),
          count(p.allocations).c_str(), 100.0 * p.reuse_ratio, count(p.segment_reserves).c_str());
      if (p.upstream)
        out += "    upstream: its blocks are segments of the pools above it (not in the summary)\n";
      if (p.has_segments && p.allocations + p.live_blocks > 0) {
        const Fragmentation& f = p.final_fragmentation;
        out +=
            fmt("    fragmentation at end: %s free (%s inside partly used segments), largest free "
                "block %s, "
                "external %.1f%%\n",
                format_size(f.free_bytes).c_str(), format_size(f.free_in_partial_segments).c_str(),
                format_size(f.largest_free_block).c_str(), 100.0 * f.external);
      }
    }
  }
  return out;
}

// Per scope: entries, bytes that escaped it, and growth per entry.
std::string scopes_section(const Analysis& a) {
  std::string out;
  if (!a.scopes.empty()) {
    out += "\nSCOPES\n";
    out += fmt("  %-24s %-9s %10s %14s %16s %14s\n", "name", "kind", "entries", "bytes escaped",
               "growth/entry", "live at end");
    for (const ScopeStats& sc : a.scopes)
      out += fmt("  %-24s %-9s %10s %14s %14.1f B %14s\n", sc.info.name.c_str(),
                 std::string(to_string(sc.info.kind)).c_str(), count(sc.entries).c_str(),
                 format_size(sc.bytes_escaped).c_str(), sc.growth_per_entry_bytes,
                 format_size(sc.live_bytes_at_end).c_str());
    out += scope_growth_text(a, 8, false);  // loops: LOOPS above
  }
  return out;
}

// Symbol warnings, then LSan's closing line.
std::string closing_text(const Analysis& a) {
  std::string out;
  const Summary& s = a.summary;
  for (const auto& w : a.symbol_warnings) out += "\nnote: " + w;
  if (!a.symbol_warnings.empty()) out += "\n";
  // LSan's closing line, for the scripts and habits that grep for it. An
  // attached process kept running after the detach: what it still held then
  // was never leak-checked, so the line does not call it leaked.
  if (a.attached)
    out += fmt("\nSUMMARY: memtrail: attached: %" PRIu64 " byte(s) in %" PRIu64
               " allocation(s) still live at detach (not leak-checked).\n",
               s.leaked.bytes, s.leaked.blocks);
  else
    out += fmt("\nSUMMARY: memtrail: %" PRIu64 " byte(s) leaked in %" PRIu64 " allocation(s).\n",
               s.leaked.bytes, s.leaked.blocks);
  return out;
}

}  // namespace

std::string report_text(const Analysis& a, const TextReportOptions& o) {
  std::string out = header_text(a);
  out += summary_section(a);
  out += loops_text(a, o.stack_depth, o.top);
  out += leaks_section(a, o);
  out += top_sites_sections(a, o);
  out += pools_section(a);
  out += scopes_section(a);
  out += memory_over_time_section(a);
  out += workspaces_text(a);
  histogram_section(out, "ALLOCATION SIZES", a.size_histogram, true);
  histogram_section(out, "LIFETIMES (freed blocks)", a.lifetime_histogram, false);
  out += closing_text(a);
  return out;
}

}  // namespace memtrail
