// Memory limits in the spirit of JavaCPP's maxBytes / maxPhysicalBytes.
//
// Process-wide: every upstream that touches real memory (heap, mmap, CUDA)
// charges its bytes to one counter checked against MEMTRAIL_MAX_BYTES, and
// the process RSS is checked against MEMTRAIL_MAX_PHYSICAL_BYTES before each
// charge. Per resource: Upstream::set_max_bytes(). Going over throws
// LimitError (a std::bad_alloc) saying which limit, the request and what is
// in use. The virtual upstream used by replays charges nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "memtrail/alloc/errors.hpp"

namespace memtrail::alloc {

struct LimitConfig {
  std::uint64_t max_bytes = 0;           // 0 = no limit
  std::uint64_t max_physical_bytes = 0;  // 0 = no limit

  // MEMTRAIL_MAX_BYTES / MEMTRAIL_MAX_PHYSICAL_BYTES, sizes like "8G" or
  // "1.5 GiB". Throws ConfigError with one line naming the variable.
  static LimitConfig from_environment();
};

class ProcessLimits {
 public:
  // The process-wide instance; configured from the environment on first use.
  static ProcessLimits& instance();

  void configure(const LimitConfig& config);
  LimitConfig config() const;

  // Checks both limits for `bytes` more and charges them; throws LimitError
  // (charging nothing) when a limit would be exceeded. `who` names the
  // resource in the message.
  void charge(std::uint64_t bytes, const std::string& who);
  void uncharge(std::uint64_t bytes) noexcept;
  std::uint64_t charged_bytes() const { return charged_.load(std::memory_order_relaxed); }

  // Resident set size of this process, from /proc/self/statm.
  static std::uint64_t physical_bytes();

 private:
  ProcessLimits();
  std::atomic<std::uint64_t> max_bytes_{0};
  std::atomic<std::uint64_t> max_physical_bytes_{0};
  std::atomic<std::uint64_t> charged_{0};
};

}  // namespace memtrail::alloc
