// PyTorch's renderings of the caching allocator's statistics, reproduced
// exactly: memory_stats() keys (torch/cuda/memory.py flattens the nested dict
// and sorts it), memory_summary()'s table and c10's OOM message.
#include "memtrail/alloc/caching_stats.hpp"

#include <cstdio>
#include <vector>

namespace memtrail::alloc {
namespace {

constexpr const char* kStatTypeNames[] = {"all", "small_pool", "large_pool"};

void add_stat(std::map<std::string, std::int64_t>& out, const std::string& prefix, const Stat& s) {
  out[prefix + ".current"] = s.current;
  out[prefix + ".peak"] = s.peak;
  out[prefix + ".allocated"] = s.allocated;
  out[prefix + ".freed"] = s.freed;
}

void add_array(std::map<std::string, std::int64_t>& out, const std::string& name,
               const StatArray& a) {
  for (int t = 0; t < 3; ++t) add_stat(out, name + "." + kStatTypeNames[t], a[t]);
}

template <typename F>
void for_each_array(DeviceStats& s, F f) {
  for (StatArray* a :
       {&s.allocation, &s.segment, &s.active, &s.inactive_split, &s.allocated_bytes,
        &s.reserved_bytes, &s.active_bytes, &s.inactive_split_bytes, &s.requested_bytes})
    for (Stat& stat : *a) f(stat);
  f(s.oversize_allocations);
  f(s.oversize_segments);
}

// torch.cuda.memory_summary's _format_size: the unit is chosen by the
// column's "all" value (pref), moving up while pref >= 768 * 1024 of the
// current unit; values are integer-divided.
std::string format_summary_size(std::int64_t sz, double pref) {
  static const char* kPrefixes[] = {"B  ", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int p = 0;
  for (int next = 1; next < 6; ++next) {
    if (pref < 768 * 1024) break;
    p = next;
    sz = sz >= 0 ? sz / 1024 : -((-sz + 1023) / 1024);  // Python's floor division
    pref /= 1024;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%6lld %s", static_cast<long long>(sz), kPrefixes[p]);
  return buf;
}

std::string format_summary_count(std::int64_t cnt, double pref) {
  static const char* kPrefixes[] = {" ", "K", "M"};
  int p = 0;
  for (int next = 1; next < 3; ++next) {
    if (pref < 750 * 1000) break;
    p = next;
    cnt = cnt >= 0 ? cnt / 1000 : -((-cnt + 999) / 1000);
    pref /= 1000;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%7lld %s ", static_cast<long long>(cnt), kPrefixes[p]);
  return buf;
}

std::string pad_right(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

}  // namespace

void DeviceStats::reset_peak() {
  for_each_array(*this, [](Stat& s) { s.reset_peak(); });
}

void DeviceStats::reset_accumulated() {
  for_each_array(*this, [](Stat& s) { s.reset_accumulated(); });
  num_alloc_retries = num_ooms = num_sync_all_streams = 0;
  num_device_alloc = num_device_free = 0;
}

std::map<std::string, std::int64_t> flatten(const DeviceStats& s) {
  std::map<std::string, std::int64_t> out;
  out["num_alloc_retries"] = s.num_alloc_retries;
  out["num_ooms"] = s.num_ooms;
  out["max_split_size"] = s.max_split_size;
  out["num_sync_all_streams"] = s.num_sync_all_streams;
  out["num_device_alloc"] = s.num_device_alloc;
  out["num_device_free"] = s.num_device_free;
  add_array(out, "allocation", s.allocation);
  add_array(out, "segment", s.segment);
  add_array(out, "active", s.active);
  add_array(out, "inactive_split", s.inactive_split);
  add_array(out, "allocated_bytes", s.allocated_bytes);
  add_array(out, "reserved_bytes", s.reserved_bytes);
  add_array(out, "active_bytes", s.active_bytes);
  add_array(out, "inactive_split_bytes", s.inactive_split_bytes);
  add_array(out, "requested_bytes", s.requested_bytes);
  add_stat(out, "oversize_allocations", s.oversize_allocations);
  add_stat(out, "oversize_segments", s.oversize_segments);
  return out;
}

std::string memory_summary(const DeviceStats& s, int device, bool abbreviated) {
  std::vector<std::string> lines;
  const std::string rule_eq(75, '='), rule_dash(75, '-');
  char buf[160];
  lines.push_back(rule_eq);
  std::snprintf(buf, sizeof buf, " %16s PyTorch CUDA memory summary, device ID %-17d ", "", device);
  lines.push_back(buf);
  lines.push_back(rule_dash);
  std::snprintf(buf, sizeof buf, "  %9s CUDA OOMs: %-12lld | %6s cudaMalloc retries: %-8lld  ", "",
                static_cast<long long>(s.num_ooms), "",
                static_cast<long long>(s.num_alloc_retries));
  lines.push_back(buf);
  lines.push_back(rule_eq);
  lines.push_back("        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  ");

  using Formatter = std::string (*)(std::int64_t, double);
  struct Metric {
    const StatArray* stat;
    const char* name;
    Formatter format;
  };
  const Metric metrics[] = {
      {&s.allocated_bytes, "Allocated memory", format_summary_size},
      {&s.active_bytes, "Active memory", format_summary_size},
      {&s.requested_bytes, "Requested memory", format_summary_size},
      {&s.reserved_bytes, "GPU reserved memory", format_summary_size},
      {&s.inactive_split_bytes, "Non-releasable memory", format_summary_size},
      {&s.allocation, "Allocations", format_summary_count},
      {&s.active, "Active allocs", format_summary_count},
      {&s.segment, "GPU reserved segments", format_summary_count},
      {&s.inactive_split, "Non-releasable allocs", format_summary_count},
  };
  auto row = [&](const std::string& name, const Stat& v, const Stat& pref, Formatter f) {
    return " " + pad_right(name, 21) + " | " + f(v.current, static_cast<double>(pref.current)) +
           " | " + f(v.peak, static_cast<double>(pref.peak)) + " | " +
           f(v.allocated, static_cast<double>(pref.allocated)) + " | " +
           f(v.freed, static_cast<double>(pref.freed)) + " ";
  };
  for (const Metric& m : metrics) {
    lines.push_back(rule_dash);
    const Stat& all = (*m.stat)[kAggregate];
    lines.push_back(row(m.name, all, all, m.format));
    if (!abbreviated) {
      lines.push_back(row("      from large pool", (*m.stat)[kLargePool], all, m.format));
      lines.push_back(row("      from small pool", (*m.stat)[kSmallPool], all, m.format));
    }
  }
  const std::pair<const Stat*, const char*> oversize[] = {
      {&s.oversize_allocations, "Oversize allocations"},
      {&s.oversize_segments, "Oversize GPU segments"}};
  for (const auto& [stat, name] : oversize) {
    lines.push_back(rule_dash);
    lines.push_back(row(name, *stat, *stat, format_summary_count));
  }
  lines.push_back(rule_eq);

  std::string out = "|";
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i) out += "|\n|";
    out += lines[i];
  }
  out += "|\n";
  return out;
}

std::string pytorch_format_size(std::uint64_t size) {
  char buf[64];
  if (size <= 1024) {
    std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(size));
  } else if (size <= 1048576) {
    std::snprintf(buf, sizeof buf, "%.2f KiB", static_cast<double>(size) / 1024.0);
  } else if (size <= 1073741824ull) {
    std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(size) / 1048576.0);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(size) / 1073741824.0);
  }
  return buf;
}

std::string oom_message(const OomReport& r) {
  std::string allowed_info;
  if (r.allowed) allowed_info = pytorch_format_size(r.allowed) + " allowed; ";
  return "CUDA out of memory. Tried to allocate " + pytorch_format_size(r.alloc_size) + ". GPU " +
         std::to_string(r.device) + " has a total capacity of " + pytorch_format_size(r.total) +
         " of which " + pytorch_format_size(r.free) + " is free. " + r.proc_info + allowed_info +
         "Of the allocated memory " + pytorch_format_size(r.allocated) +
         " is allocated by PyTorch, and " + pytorch_format_size(r.reserved - r.allocated) +
         " is reserved by PyTorch but unallocated. If reserved but unallocated memory is large "
         "try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  "
         "See documentation for Memory Management  "
         "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)";
}

}  // namespace memtrail::alloc
