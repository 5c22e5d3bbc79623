// Division of 64-bit values by a divisor fixed at run time, exact for every
// dividend, without a div instruction. The writer divides every event's time
// by the trace's time resolution; a 64-bit div costs tens of cycles, this a
// multiply, a multiply-subtract and a compare.
//
// With m = floor((2^64 - 1) / d), high64(n * m) >= n / d - n / 2^64 > n / d - 1,
// so the estimate is floor(n / d) or one less, and one compare of the
// remainder fixes it (the remainder is then below 2 d: no overflow).
#pragma once

#include <cstdint>

namespace memtrail::format {

class ExactDivider {
 public:
  explicit ExactDivider(std::uint64_t divisor = 1)
      : divisor_(divisor), multiplier_(~std::uint64_t{0} / divisor) {}

  std::uint64_t divisor() const { return divisor_; }

  std::uint64_t divide(std::uint64_t n) const {
    auto q = static_cast<std::uint64_t>((static_cast<unsigned __int128>(n) * multiplier_) >> 64);
    std::uint64_t r = n - q * divisor_;
    return q + (r >= divisor_ ? 1 : 0);
  }

 private:
  std::uint64_t divisor_;
  std::uint64_t multiplier_;
};

}  // namespace memtrail::format
