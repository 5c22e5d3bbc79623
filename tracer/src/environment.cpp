// RecorderOptions::from_environment and the process-wide list of MEMTRAIL_*
// names, which other libraries in the process extend with their own.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "memtrail/detail/diagnostics.hpp"
#include "memtrail/detail/environment.hpp"
#include "memtrail/recorder.hpp"

extern char** environ;

namespace memtrail {

namespace {

std::mutex& names_mutex() {
  static std::mutex m;
  return m;
}
std::vector<std::string_view>& extra_names() {
  static std::vector<std::string_view> v;
  return v;
}

bool parse_bool(const char* name, const char* value, bool fallback) {
  std::string v = value;
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  detail::diagnostic("memtrail: %s=%s is not a boolean (use 0 or 1); using %d\n", name, value,
                     fallback ? 1 : 0);
  return fallback;
}

std::uint64_t parse_count(const char* name, const char* value, std::uint64_t fallback,
                          std::uint64_t max) {
  char* end = nullptr;
  errno = 0;
  unsigned long long n = std::strtoull(value, &end, 10);
  if (errno || end == value || *end != '\0' || value[0] == '-' || n > max) {
    detail::diagnostic("memtrail: %s=%s is not a number in 0..%llu; using %llu\n", name, value,
                       static_cast<unsigned long long>(max),
                       static_cast<unsigned long long>(fallback));
    return fallback;
  }
  return n;
}

}  // namespace

namespace detail {

void add_known_environment_variable(std::string_view name) {
  std::lock_guard lock(names_mutex());
  extra_names().push_back(name);
}

std::uint32_t time_resolution_from_environment() {
  const char* v = std::getenv("MEMTRAIL_TIME_RESOLUTION_NS");
  if (!v) return kDefaultTimeResolutionNs;
  std::uint64_t n =
      parse_count("MEMTRAIL_TIME_RESOLUTION_NS", v, kDefaultTimeResolutionNs, 1'000'000'000);
  if (n == 0) {
    detail::diagnostic(
        "memtrail: MEMTRAIL_TIME_RESOLUTION_NS=0 is not a resolution (1 = exact ns); "
        "using %u\n",
        kDefaultTimeResolutionNs);
    return kDefaultTimeResolutionNs;
  }
  return static_cast<std::uint32_t>(n);
}

AddressModel address_model_from_environment() {
  const char* v = std::getenv("MEMTRAIL_ADDRESS_MODEL");
  if (!v || std::string_view(v) == "auto") return AddressModel::automatic;
  std::string_view s = v;
  if (s == "1" || s == "true" || s == "yes" || s == "on") return AddressModel::always;
  if (s == "0" || s == "false" || s == "no" || s == "off") return AddressModel::never;
  detail::diagnostic("memtrail: MEMTRAIL_ADDRESS_MODEL=%s is not 0, 1 or auto; using auto\n", v);
  return AddressModel::automatic;
}

bool is_known_environment_variable(std::string_view name) {
  for (std::string_view k : kRecorderEnvironment)
    if (k == name) return true;
  std::lock_guard lock(names_mutex());
  for (std::string_view k : extra_names())
    if (k == name) return true;
  return false;
}

}  // namespace detail

RecorderOptions RecorderOptions::from_environment() {
  RecorderOptions o;
  if (const char* v = std::getenv("MEMTRAIL_OUTPUT"); v && *v) o.output = v;
  if (const char* v = std::getenv("MEMTRAIL_STACKS"))
    o.stacks = parse_bool("MEMTRAIL_STACKS", v, o.stacks);
  if (const char* v = std::getenv("MEMTRAIL_STACK_DEPTH"))
    o.stack_depth = static_cast<int>(parse_count("MEMTRAIL_STACK_DEPTH", v, o.stack_depth, 256));
  if (const char* v = std::getenv("MEMTRAIL_STACK_CACHE"))
    o.stack_cache = parse_bool("MEMTRAIL_STACK_CACHE", v, o.stack_cache);
  if (const char* v = std::getenv("MEMTRAIL_SAMPLE_MS"))
    o.sample_interval_ms = static_cast<std::uint32_t>(
        parse_count("MEMTRAIL_SAMPLE_MS", v, o.sample_interval_ms, 3600000));
  if (const char* v = std::getenv("MEMTRAIL_FLUSH_MS")) {
    o.flush_interval_ms = static_cast<std::uint32_t>(
        parse_count("MEMTRAIL_FLUSH_MS", v, o.flush_interval_ms, 3600000));
    if (o.flush_interval_ms == 0) o.flush_interval_ms = 1;
  }
  if (const char* v = std::getenv("MEMTRAIL_TRACK_LIVE_HEAP"))
    o.track_live_heap = parse_bool("MEMTRAIL_TRACK_LIVE_HEAP", v, o.track_live_heap);
  for (char** e = environ; e && *e; ++e) {
    if (std::strncmp(*e, "MEMTRAIL_", 9) != 0) continue;
    const char* eq = std::strchr(*e, '=');
    std::string_view name(*e, eq ? static_cast<std::size_t>(eq - *e) : std::strlen(*e));
    if (!detail::is_known_environment_variable(name))
      detail::diagnostic("memtrail: unknown environment variable %.*s (ignored)\n",
                         static_cast<int>(name.size()), name.data());
  }
  return o;
}

}  // namespace memtrail
