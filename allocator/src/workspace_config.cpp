#include "memtrail/alloc/workspace_config.hpp"

#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <utility>

#include "memtrail/size.hpp"

namespace memtrail::alloc {
namespace {

template <typename E, std::size_t N>
using Names = std::array<std::pair<E, std::string_view>, N>;

constexpr Names<AllocationPolicy, 2> kAllocation{
    {{AllocationPolicy::STRICT, "STRICT"}, {AllocationPolicy::OVERALLOCATE, "OVERALLOCATE"}}};
constexpr Names<LearningPolicy, 3> kLearning{{{LearningPolicy::FIRST_LOOP, "FIRST_LOOP"},
                                              {LearningPolicy::OVER_TIME, "OVER_TIME"},
                                              {LearningPolicy::NONE, "NONE"}}};
constexpr Names<ResetPolicy, 2> kReset{{{ResetPolicy::BLOCK_LEFT, "BLOCK_LEFT"},
                                        {ResetPolicy::ENDOFBUFFER_REACHED, "ENDOFBUFFER_REACHED"}}};
constexpr Names<SpillPolicy, 3> kSpill{{{SpillPolicy::EXTERNAL, "EXTERNAL"},
                                        {SpillPolicy::FAIL, "FAIL"},
                                        {SpillPolicy::REALLOCATE, "REALLOCATE"}}};
constexpr Names<LocationPolicy, 2> kLocation{
    {{LocationPolicy::RAM, "RAM"}, {LocationPolicy::MMAP, "MMAP"}}};
constexpr Names<MirroringPolicy, 2> kMirroring{
    {{MirroringPolicy::FULL, "FULL"}, {MirroringPolicy::HOST_ONLY, "HOST_ONLY"}}};
constexpr Names<DebugMode, 3> kDebug{{{DebugMode::DISABLED, "DISABLED"},
                                      {DebugMode::SPILL_EVERYTHING, "SPILL_EVERYTHING"},
                                      {DebugMode::BYPASS_EVERYTHING, "BYPASS_EVERYTHING"}}};

template <typename E, std::size_t N>
std::string_view name_of(const Names<E, N>& names, E value) {
  for (const auto& [v, n] : names)
    if (v == value) return n;
  return "?";
}

template <typename E, std::size_t N>
E parse_enum(const Names<E, N>& names, std::string_view field, std::string_view text) {
  for (const auto& [v, n] : names)
    if (n == text) return v;
  std::string expected;
  for (const auto& [v, n] : names) expected += (expected.empty() ? "" : ", ") + std::string(n);
  throw ConfigError(std::string(field) + ": unknown value '" + std::string(text) + "' (expected " +
                    expected + ")");
}

std::uint64_t parse_bytes(std::string_view field, std::string_view text) {
  if (!text.empty() && text.front() == '-')
    throw ConfigError(std::string(field) + ": must not be negative, got '" + std::string(text) +
                      "'");
  std::string error;
  auto value = parse_size(text, &error);
  if (!value) throw ConfigError(std::string(field) + ": " + error);
  return *value;
}

std::uint64_t parse_count(std::string_view field, std::string_view text) {
  std::string s(text);
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end || errno)
    throw ConfigError(std::string(field) + ": not a number: '" + s + "'");
  if (v < 0) throw ConfigError(std::string(field) + ": must not be negative, got '" + s + "'");
  return static_cast<std::uint64_t>(v);
}

double parse_double(std::string_view field, std::string_view text) {
  std::string s(text);
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end || !std::isfinite(v))
    throw ConfigError(std::string(field) + ": not a number: '" + s + "'");
  if (v < 0) throw ConfigError(std::string(field) + ": must not be negative, got '" + s + "'");
  return v;
}

void set_key(WorkspaceConfiguration& c, std::string_view key, std::string_view value) {
  if (key == "initialSize")
    c.initial_size = parse_bytes(key, value);
  else if (key == "minSize")
    c.min_size = parse_bytes(key, value);
  else if (key == "maxSize")
    c.max_size = parse_bytes(key, value);
  else if (key == "overallocationLimit")
    c.overallocation_limit = parse_double(key, value);
  else if (key == "cyclesBeforeInitialization")
    c.cycles_before_initialization = parse_count(key, value);
  else if (key == "stepsNumber")
    c.steps_number = parse_count(key, value);
  else if (key == "policyAllocation")
    c.policy_allocation = parse_enum(kAllocation, key, value);
  else if (key == "policyLearning")
    c.policy_learning = parse_enum(kLearning, key, value);
  else if (key == "policyReset")
    c.policy_reset = parse_enum(kReset, key, value);
  else if (key == "policySpill")
    c.policy_spill = parse_enum(kSpill, key, value);
  else if (key == "policyLocation")
    c.policy_location = parse_enum(kLocation, key, value);
  else if (key == "policyMirroring")
    c.policy_mirroring = parse_enum(kMirroring, key, value);
  else if (key == "tempFilePath")
    c.temp_file_path = std::string(value);
  else
    throw ConfigError("unknown workspace configuration key '" + std::string(key) +
                      "' (keys: initialSize, minSize, maxSize, overallocationLimit, "
                      "cyclesBeforeInitialization, stepsNumber, policyAllocation, policyLearning, "
                      "policyReset, policySpill, policyLocation, policyMirroring, tempFilePath)");
}

}  // namespace

std::string_view to_string(AllocationPolicy p) {
  return name_of(kAllocation, p);
}
std::string_view to_string(LearningPolicy p) {
  return name_of(kLearning, p);
}
std::string_view to_string(ResetPolicy p) {
  return name_of(kReset, p);
}
std::string_view to_string(SpillPolicy p) {
  return name_of(kSpill, p);
}
std::string_view to_string(LocationPolicy p) {
  return name_of(kLocation, p);
}
std::string_view to_string(MirroringPolicy p) {
  return name_of(kMirroring, p);
}
std::string_view to_string(DebugMode m) {
  return name_of(kDebug, m);
}

DebugMode parse_debug_mode(std::string_view text, std::string_view field) {
  return parse_enum(kDebug, field, text);
}

void WorkspaceConfiguration::validate() const {
  if (max_size && min_size > max_size)
    throw ConfigError("minSize: " + std::to_string(min_size) + " is larger than maxSize " +
                      std::to_string(max_size));
  if (max_size && initial_size > max_size)
    throw ConfigError("initialSize: " + std::to_string(initial_size) + " is larger than maxSize " +
                      std::to_string(max_size));
  if (!std::isfinite(overallocation_limit) || overallocation_limit < 0)
    throw ConfigError("overallocationLimit: must be a non-negative number");
  if (policy_reset == ResetPolicy::ENDOFBUFFER_REACHED &&
      policy_allocation == AllocationPolicy::OVERALLOCATE && overallocation_limit < 1.0)
    throw ConfigError(
        "overallocationLimit: For cyclic workspace overallocation should be positive integral "
        "value (got " +
        std::to_string(overallocation_limit) + ", need >= 1 with OVERALLOCATE)");
  if (policy_location == LocationPolicy::MMAP && initial_size == 0)
    throw ConfigError(
        "initialSize: MMAP target file path should be non-null or workspace "
        "initialSize should be >0 for temp file");
  if (policy_location == LocationPolicy::MMAP && policy_learning != LearningPolicy::NONE)
    throw ConfigError(
        "policyLearning: Workspace backed by memory-mapped file can't have "
        "LearningPolicy defined (use policyLearning:NONE)");
}

WorkspaceConfiguration WorkspaceConfiguration::parse(std::string_view text) {
  WorkspaceConfiguration c;
  while (!text.empty()) {
    std::size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (item.empty()) continue;
    std::size_t colon = item.find(':');
    if (colon == std::string_view::npos)
      throw ConfigError("workspace configuration: expected key:value, got '" + std::string(item) +
                        "'");
    set_key(c, item.substr(0, colon), item.substr(colon + 1));
  }
  c.validate();
  return c;
}

WorkspaceConfiguration WorkspaceConfiguration::from_environment() {
  const char* text = std::getenv("MEMTRAIL_WORKSPACE_CONF");
  if (!text) return {};
  try {
    return parse(text);
  } catch (const ConfigError& e) {
    throw ConfigError(std::string("MEMTRAIL_WORKSPACE_CONF: ") + e.what());
  }
}

std::string WorkspaceConfiguration::to_string() const {
  std::ostringstream out;
  out.precision(17);
  out << "initialSize:" << initial_size << ",minSize:" << min_size << ",maxSize:" << max_size
      << ",overallocationLimit:" << overallocation_limit
      << ",cyclesBeforeInitialization:" << cycles_before_initialization
      << ",stepsNumber:" << steps_number
      << ",policyAllocation:" << alloc::to_string(policy_allocation)
      << ",policyLearning:" << alloc::to_string(policy_learning)
      << ",policyReset:" << alloc::to_string(policy_reset)
      << ",policySpill:" << alloc::to_string(policy_spill)
      << ",policyLocation:" << alloc::to_string(policy_location)
      << ",policyMirroring:" << alloc::to_string(policy_mirroring);
  if (!temp_file_path.empty()) out << ",tempFilePath:" << temp_file_path;
  return out.str();
}

}  // namespace memtrail::alloc
