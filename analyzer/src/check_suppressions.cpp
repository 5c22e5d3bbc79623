// LeakSanitizer-style leak suppressions: parsing, matching, and the built-in
// rules for the C and C++ runtimes' one-time allocations.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "memtrail/check.hpp"

namespace memtrail {

namespace {

// Matches `pattern` (with `*`) against the start of `text`; with `anchor_end`
// the match must also consume all of `text`. Iterative backtracking over the
// last `*` only: linear for the patterns people write.
bool match_here(std::string_view p, std::string_view t, bool anchor_end) {
  std::size_t pi = 0, ti = 0, star = std::string_view::npos, star_t = 0;
  while (true) {
    if (pi == p.size()) {
      if (!anchor_end || ti == t.size()) return true;
    } else if (p[pi] == '*') {
      star = pi++;
      star_t = ti;
      continue;
    } else if (ti < t.size() && p[pi] == t[ti]) {
      ++pi;
      ++ti;
      continue;
    }
    if (star == std::string_view::npos || star_t >= t.size()) return false;
    pi = star + 1;
    ti = ++star_t;
  }
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::string_view basename_of(std::string_view path) {
  std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

bool wildcard_match(std::string_view pattern, std::string_view text) {
  bool anchor_start = !pattern.empty() && pattern.front() == '^';
  if (anchor_start) pattern.remove_prefix(1);
  bool anchor_end = !pattern.empty() && pattern.back() == '$';
  if (anchor_end) pattern.remove_suffix(1);
  if (anchor_start) return match_here(pattern, text, anchor_end);
  // Unanchored: the pattern may start anywhere (LSan's TemplateMatch).
  for (std::size_t start = 0; start <= text.size(); ++start)
    if (match_here(pattern, text.substr(start), anchor_end)) return true;
  return false;
}

namespace {

bool frame_matches(const Suppression& rule, const Frame& f) {
  const std::string& p = rule.pattern;
  bool function = !f.function.empty() && wildcard_match(p, f.function);
  bool file = !f.file.empty() && wildcard_match(p, f.file);
  switch (rule.type) {
    case SuppressionType::fun:
      return function;
    case SuppressionType::src:
      return file;
    case SuppressionType::leak:
      break;
  }
  // The module matches by full path or by file name ("libfoo.so").
  return function || file ||
         (!f.module.empty() &&
          (wildcard_match(p, f.module) || wildcard_match(p, basename_of(f.module))));
}

}  // namespace

std::string Suppression::text() const {
  const char* prefix = type == SuppressionType::fun   ? "fun:"
                       : type == SuppressionType::src ? "src:"
                                                      : "leak:";
  return prefix + pattern;
}

int SuppressionSet::match(const FrameList& frames) const {
  for (std::size_t i = 0; i < rules.size(); ++i)
    for (const Frame& f : frames)
      if (frame_matches(rules[i], f)) return static_cast<int>(i);
  return -1;
}

bool parse_suppressions(std::string_view text, const std::string& origin, SuppressionSet& out,
                        std::string* error) {
  std::size_t line_no = 0;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++line_no;
    line = trim(line);
    if (line.empty() || line.front() == '#') continue;
    std::string where = origin + ":" + std::to_string(line_no);
    std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      if (error) *error = where + ": expected 'leak:PATTERN', got '" + std::string(line) + "'";
      return false;
    }
    std::string_view type = trim(line.substr(0, colon));
    std::string_view pattern = trim(line.substr(colon + 1));
    SuppressionType kind;
    if (type == "leak") {
      kind = SuppressionType::leak;
    } else if (type == "fun") {
      kind = SuppressionType::fun;
    } else if (type == "src") {
      kind = SuppressionType::src;
    } else {
      if (error)
        *error = where + ": unknown suppression type '" + std::string(type) +
                 "' (memtrail understands 'leak:', 'fun:' and 'src:')";
      return false;
    }
    if (pattern.empty()) {
      if (error) *error = where + ": empty pattern after '" + std::string(type) + ":'";
      return false;
    }
    Suppression rule{std::string(pattern), where};
    rule.type = kind;
    out.rules.push_back(std::move(rule));
  }
  return true;
}

bool load_suppressions(const std::string& path, SuppressionSet& out, std::string* error) {
  auto fail = [&](const std::string& why) {
    if (error) *error = "cannot read suppressions file '" + path + "': " + why;
    return false;
  };
  // A directory opens and reads as empty: it would suppress nothing, silently.
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return fail(std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return fail("is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(std::strerror(errno));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse_suppressions(buffer.str(), path, out, error);
}

const std::vector<std::string>& default_suppression_patterns() {
  // Keep in sync with docs/ci.md ("Built-in suppressions"), which says why
  // each one is a one-time allocation and not a leak.
  // Every pattern names a function that allocates on the runtime's behalf
  // and never calls back into the program: a rule such as `_dl_init` or
  // `__libc_start_main` would sit above every static constructor or above
  // main() and hide the program's own leaks.
  static const std::vector<std::string> patterns = {
      // libstdc++: the emergency exception-handling pool (one block at start-up).
      // (by file: the pool's constructor is a static function without a
      // unique name, and a user's `pool::pool` must not match)
      "eh_alloc.cc",
      "__cxa_get_globals",
      // The dynamic loader: link maps, dependency lists, TLS blocks and DTVs.
      "^_dl_map_object",
      "^_dl_new_object",
      "^_dl_allocate_tls",
      "^_dl_check_map_versions",
      "^_dl_resize_dtv",
      "^_dl_update_slotinfo",
      "^_dl_exception_create",
      "^__libc_dlerror_result",
      // Name service switch: loaded modules and their caches.
      "^__nss_",
      "^nss_",
      // iconv/gconv modules and conversion steps cached for the process.
      "^__gconv_",
      // Time-zone data read once by tzset/localtime.
      "^tzset_internal",
      "^__tzfile_read",
      "^__tzstring",
      // Locale data, loaded once per category.
      "^_nl_",
      "^setlocale$",
      // Per-stream stdio buffers and the atexit/thread_local destructor lists.
      "^_IO_file_doallocate",
      "^__new_exitfn",
      "^__cxa_thread_atexit_impl",
      "^__libc_early_init",
  };
  return patterns;
}

void add_default_suppressions(SuppressionSet& out) {
  for (const std::string& p : default_suppression_patterns())
    out.rules.push_back(Suppression{p, "default"});
}

}  // namespace memtrail
