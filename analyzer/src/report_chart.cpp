// ms_print-like terminal charts of memory over time (report_chart.hpp).
#include "memtrail/report_chart.hpp"

#include <algorithm>
#include <vector>

#include "memtrail/report_text.hpp"
#include "memtrail/size.hpp"

namespace memtrail {

namespace {

// The series as `width` columns over [from, to]: each column the maximum of
// the points in its slice, or the last value before it (a step function).
std::vector<std::uint64_t> columns(const Series& s, std::uint64_t from, std::uint64_t to,
                                   std::size_t width) {
  std::vector<std::uint64_t> out(width, 0);
  std::uint64_t span = to > from ? to - from : 1;
  std::uint64_t carried = 0;
  std::size_t next = 0;
  for (std::size_t c = 0; c < width; ++c) {
    // Slice c ends at from + span * (c + 1) / width (the last one at `to`).
    std::uint64_t end =
        from + static_cast<std::uint64_t>(static_cast<double>(span) * static_cast<double>(c + 1) /
                                          static_cast<double>(width));
    std::uint64_t v = carried;
    bool any = false;
    while (next < s.time_ns.size() && (s.time_ns[next] < end || c + 1 == width)) {
      v = any ? std::max(v, s.value[next]) : s.value[next];
      carried = s.value[next];
      any = true;
      ++next;
    }
    out[c] = any ? v : carried;
  }
  return out;
}

std::uint64_t max_of(const std::vector<std::uint64_t>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

}  // namespace

std::string format_chart(const std::string& title, const Series& used, const Series& reserved,
                         std::uint64_t from_ns, std::uint64_t to_ns, ChartSize size) {
  if (size.width == 0 || size.height == 0) return {};
  auto u = columns(used, from_ns, to_ns, size.width);
  auto r = reserved.value.empty() ? std::vector<std::uint64_t>(size.width, 0)
                                  : columns(reserved, from_ns, to_ns, size.width);
  std::uint64_t top = std::max(max_of(u), max_of(r));
  if (top == 0) return {};
  std::string out = "  " + title + ", peak " + format_size(top) + "\n";
  const std::string label = format_size(top);
  const std::size_t margin = std::max<std::size_t>(label.size(), 1) + 4;
  for (std::size_t row = size.height; row >= 1; --row) {
    // A cell is filled when the column reaches its row's lower edge.
    double level =
        static_cast<double>(top) * static_cast<double>(row - 1) / static_cast<double>(size.height);
    std::string line = row == size.height ? label : std::string();
    line.insert(0, margin - 2 - line.size(), ' ');
    line += " |";
    for (std::size_t c = 0; c < size.width; ++c) {
      bool has_used = u[c] > 0 && static_cast<double>(u[c]) > level;
      bool has_reserved = r[c] > 0 && static_cast<double>(r[c]) > level;
      line += has_used ? '#' : has_reserved ? ':' : ' ';
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  out += std::string(margin - 3, ' ') + "0 +" + std::string(size.width, '-') + "> " +
         format_duration(to_ns - std::min(to_ns, from_ns)) + "\n";
  return out;
}

std::string memory_over_time_section(const Analysis& a, ChartSize size) {
  std::uint64_t from = a.summary.first_event_ns, to = a.summary.last_event_ns;
  std::string charts;
  for (const PoolStats& p : a.pools) {
    std::string title = "pool " + p.info.name + ": used (#)";
    if (!p.reserved.value.empty() && max_of(p.reserved.value) > 0) title += " and reserved (:)";
    charts += format_chart(title, p.used, p.reserved, from, to, size);
  }
  charts += format_chart("process RSS (#)", a.samples.rss, {}, from, to, size);
  return charts.empty() ? std::string() : "\nMEMORY OVER TIME\n" + charts;
}

}  // namespace memtrail
