// JUnit XML for `memtrail check --junit`: one <testcase> per limit, in the
// shape Jenkins, GitLab and GitHub test reporters render.
#include <cstdio>

#include "memtrail/check.hpp"

namespace memtrail {

namespace {

std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // Control characters other than tab/newline are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r')
          out += '?';
        else
          out += c;
    }
  }
  return out;
}

}  // namespace

std::string to_junit_xml(const CheckResult& r, const std::string& suite_name, double seconds) {
  std::string tests = std::to_string(r.items.size());
  std::string failures = std::to_string(r.failures());
  char time[32];
  std::snprintf(time, sizeof time, "%.3f", seconds);
  std::string suite = xml_escape(suite_name);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"memtrail\" tests=\"" + tests + "\" failures=\"" + failures +
         "\" errors=\"0\" skipped=\"0\" time=\"" + time + "\">\n";
  out += "  <testsuite name=\"" + suite + "\" tests=\"" + tests + "\" failures=\"" + failures +
         "\" errors=\"0\" skipped=\"0\" time=\"" + time + "\">\n";
  for (const CheckItem& item : r.items) {
    out += "    <testcase classname=\"" + suite + "\" name=\"" + xml_escape(item.name) +
           "\" time=\"0\"";
    if (item.passed) {
      out +=
          ">\n      <system-out>" + xml_escape(item.summary) + "</system-out>\n    </testcase>\n";
    } else {
      out += ">\n      <failure type=\"memtrail.limit\" message=\"" + xml_escape(item.summary) +
             "\">" + xml_escape(item.summary + "\n" + item.details) +
             "</failure>\n    </testcase>\n";
    }
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace memtrail
