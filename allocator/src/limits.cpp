#include "memtrail/alloc/limits.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "memtrail/size.hpp"

namespace memtrail::alloc {
namespace {

std::uint64_t size_from_env(const char* variable) {
  const char* text = std::getenv(variable);
  if (!text || !*text) return 0;
  std::string error;
  auto value = parse_size(text, &error);
  if (!value) throw ConfigError(std::string(variable) + "=" + error);
  return *value;
}

}  // namespace

LimitConfig LimitConfig::from_environment() {
  LimitConfig config;
  config.max_bytes = size_from_env("MEMTRAIL_MAX_BYTES");
  config.max_physical_bytes = size_from_env("MEMTRAIL_MAX_PHYSICAL_BYTES");
  return config;
}

ProcessLimits::ProcessLimits() {
  configure(LimitConfig::from_environment());
}

ProcessLimits& ProcessLimits::instance() {
  static ProcessLimits limits;
  return limits;
}

void ProcessLimits::configure(const LimitConfig& config) {
  max_bytes_.store(config.max_bytes, std::memory_order_relaxed);
  max_physical_bytes_.store(config.max_physical_bytes, std::memory_order_relaxed);
}

LimitConfig ProcessLimits::config() const {
  return {max_bytes_.load(std::memory_order_relaxed),
          max_physical_bytes_.load(std::memory_order_relaxed)};
}

std::uint64_t ProcessLimits::physical_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long long size = 0, resident = 0;
  int n = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  if (n != 2) return 0;
  return resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

void ProcessLimits::charge(std::uint64_t bytes, const std::string& who) {
  const std::uint64_t max_physical = max_physical_bytes_.load(std::memory_order_relaxed);
  if (max_physical) {
    std::uint64_t physical = physical_bytes();
    if (physical + bytes > max_physical)
      throw LimitError(LimitError::Which::process_max_physical_bytes,
                       "memtrail: MEMTRAIL_MAX_PHYSICAL_BYTES exceeded by '" + who +
                           "': physical bytes (RSS) " + format_size(physical) + " + request " +
                           format_size(bytes) + " > limit " + format_size(max_physical),
                       bytes, physical, max_physical);
  }
  const std::uint64_t max = max_bytes_.load(std::memory_order_relaxed);
  std::uint64_t current = charged_.load(std::memory_order_relaxed);
  for (;;) {
    if (max && current + bytes > max)
      throw LimitError(LimitError::Which::process_max_bytes,
                       "memtrail: MEMTRAIL_MAX_BYTES exceeded by '" + who + "': in use " +
                           format_size(current) + " + request " + format_size(bytes) + " > limit " +
                           format_size(max),
                       bytes, current, max);
    if (charged_.compare_exchange_weak(current, current + bytes, std::memory_order_relaxed)) return;
  }
}

void ProcessLimits::uncharge(std::uint64_t bytes) noexcept {
  charged_.fetch_sub(bytes, std::memory_order_relaxed);
}

}  // namespace memtrail::alloc
