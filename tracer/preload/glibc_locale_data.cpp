// glibc's LC_CTYPE locale data block (glibc_locale_data.hpp).
#include "glibc_locale_data.hpp"

namespace memtrail::preload {
namespace {

constexpr std::uint64_t kHeader = 56;        // struct __locale_data before values[]
constexpr std::uint64_t kPrivateAt = 32;     // its `private`
constexpr std::uint64_t kCountAt = 48;       // its `nstrings` (32 bits)
constexpr std::uint64_t kCtypeData = 24;     // struct lc_ctype_data
constexpr std::uint64_t kDigitWidths = 16;   // lc_ctype_data past its `fcts`
constexpr std::uint64_t kMostValues = 4096;  // glibc 2.36's LC_CTYPE has 89

}  // namespace

bool is_locale_digit_widths(const HeapBlock& block, std::uint64_t offset, MemoryReader& reader) {
  if (block.size < kHeader + 8 + kCtypeData || offset + kDigitWidths < block.size ||
      offset >= block.size)
    return false;
  const std::uint64_t values = block.size - kHeader - kCtypeData;
  if (values % 8 != 0 || values / 8 > kMostValues) return false;
  std::uint64_t header[kHeader / 8] = {};
  if (reader.read(static_cast<std::uintptr_t>(block.address), header, sizeof header) !=
      sizeof header)
    return false;
  const std::uint64_t private_data = header[kPrivateAt / 8];
  const std::uint64_t count = header[kCountAt / 8] & 0xffffffffu;
  return private_data == block.address + block.size - kCtypeData && count == values / 8;
}

}  // namespace memtrail::preload
