// Errors of the allocator stack. Every allocation failure is a std::bad_alloc
// so code written against std::pmr keeps working; the derived types carry the
// one-line explanation a user needs (what was asked, what is in use, why no).
#pragma once

#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>

namespace memtrail::alloc {

// The largest request a pool serves: PyTorch's and XLA's byte counts are
// int64, and every pool keeps its sums (stats, rounding) in that range. A
// larger request is refused with OutOfMemoryError before any arithmetic.
inline constexpr std::uint64_t kMaxRequestBytes = INT64_MAX;

// An allocation a pool could not satisfy, after its retries. what() is the
// pool's own message (PyTorch's text for CachingPool, XLA-style for BfcPool).
class OutOfMemoryError : public std::bad_alloc {
 public:
  explicit OutOfMemoryError(std::string message) : message_(std::move(message)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

// A configured limit (per resource or process-wide) would be exceeded.
class LimitError : public OutOfMemoryError {
 public:
  enum class Which { resource_max_bytes, process_max_bytes, process_max_physical_bytes };
  LimitError(Which which, std::string message, std::uint64_t requested, std::uint64_t in_use,
             std::uint64_t limit)
      : OutOfMemoryError(std::move(message)),
        which_(which),
        requested_(requested),
        in_use_(in_use),
        limit_(limit) {}
  Which which() const { return which_; }
  std::uint64_t requested() const { return requested_; }
  std::uint64_t in_use() const { return in_use_; }
  std::uint64_t limit() const { return limit_; }

 private:
  Which which_;
  std::uint64_t requested_, in_use_, limit_;
};

// A bad configuration string or environment variable; what() is one line
// naming the key and the value.
class ConfigError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

}  // namespace memtrail::alloc
