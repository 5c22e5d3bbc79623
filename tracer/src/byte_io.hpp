// Little-endian and LEB128 primitives of the .mtr format (docs/trace-format.md).
// ByteSink appends to a std::string; ByteSource reads a bounded span and never
// reads past it: every getter returns false on truncated or malformed input.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace memtrail::format {

inline std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
inline std::int64_t unzigzag(std::uint64_t v) {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

struct ByteSink {
  std::string& out;

  void u8(std::uint8_t v) { out.push_back(static_cast<char>(v)); }
  void fixed(std::uint64_t v, int bytes) {
    char little[8];
    for (int i = 0; i < bytes; ++i) little[i] = static_cast<char>(v >> (8 * i));
    out.append(little, static_cast<std::size_t>(bytes));
  }
  void varint(std::uint64_t v) {
    // One append instead of a push_back (and its capacity check) per byte.
    char bytes[10];
    int n = 0;
    while (v >= 0x80) {
      bytes[n++] = static_cast<char>(v | 0x80);
      v >>= 7;
    }
    bytes[n++] = static_cast<char>(v);
    out.append(bytes, static_cast<std::size_t>(n));
  }
  void svarint(std::int64_t v) { varint(zigzag(v)); }
  void str(std::string_view s) {
    varint(s.size());
    out.append(s);
  }
};

class ByteSource {
 public:
  ByteSource() = default;
  ByteSource(const char* data, std::size_t size) : p_(data), end_(data + size) {}

  bool empty() const { return p_ == end_; }
  std::size_t remaining() const { return static_cast<std::size_t>(end_ - p_); }

  bool u8(std::uint8_t& v) {
    if (p_ == end_) return false;
    v = static_cast<std::uint8_t>(*p_++);
    return true;
  }
  bool fixed(std::uint64_t& v, int bytes) {
    if (remaining() < static_cast<std::size_t>(bytes)) return false;
    v = 0;
    for (int i = 0; i < bytes; ++i) v |= std::uint64_t(static_cast<std::uint8_t>(p_[i])) << (8 * i);
    p_ += bytes;
    return true;
  }
  // Rejects varints longer than 10 bytes or with bits beyond 64. Most
  // varints of a trace are one byte: that case is inline, the loop is not.
  // Two-byte varints (free references through a ring, candidate ranks) are
  // common enough to be inline too.
  [[gnu::always_inline]] bool varint(std::uint64_t& v) {
    if (p_ != end_) [[likely]] {
      std::uint8_t b0 = static_cast<std::uint8_t>(*p_);
      if (!(b0 & 0x80)) [[likely]] {
        v = b0;
        ++p_;
        return true;
      }
      if (end_ - p_ >= 2 && !(static_cast<std::uint8_t>(p_[1]) & 0x80)) {
        v = (b0 & 0x7fu) | (std::uint64_t{static_cast<std::uint8_t>(p_[1])} << 7);
        p_ += 2;
        return true;
      }
    }
    return varint_long(v);
  }
  [[gnu::noinline]] bool varint_long(std::uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (p_ == end_) return false;
      std::uint8_t b = static_cast<std::uint8_t>(*p_++);
      if (shift == 63 && (b & 0x7e)) return false;
      v |= std::uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }
  bool varint32(std::uint32_t& v) {
    std::uint64_t w;
    if (!varint(w) || w > 0xffffffffu) return false;
    v = static_cast<std::uint32_t>(w);
    return true;
  }
  bool svarint(std::int64_t& v) {
    std::uint64_t w;
    if (!varint(w)) return false;
    v = unzigzag(w);
    return true;
  }
  bool str(std::string_view& s, std::size_t max = 1u << 24) {
    std::uint64_t n;
    if (!varint(n) || n > remaining() || n > max) return false;
    s = std::string_view(p_, n);
    p_ += n;
    return true;
  }
  bool take(std::size_t n, ByteSource& sub) {
    if (n > remaining()) return false;
    sub = ByteSource(p_, n);
    p_ += n;
    return true;
  }

 private:
  const char* p_ = nullptr;
  const char* end_ = nullptr;
};

// A "split" varint: its first LEB128 byte goes to one stream and its
// continuation bytes to another. Low bytes are noisy, high bytes repetitive;
// apart, each compresses better than the two interleaved.
inline void split_varint(ByteSink first, ByteSink rest, std::uint64_t v) {
  if (v < 0x80) {
    first.u8(static_cast<std::uint8_t>(v));
    return;
  }
  first.u8(static_cast<std::uint8_t>(v | 0x80));
  rest.varint(v >> 7);
}
// The continuation of a split varint whose first byte had its high bit.
[[gnu::always_inline]] inline bool split_varint_high(ByteSource& rest, std::uint64_t& v) {
  std::uint64_t high;
  if (!rest.varint(high) || high > (UINT64_MAX >> 7)) return false;
  v |= high << 7;
  return true;
}
// Inline in the decode loop (three per event): mostly one byte.
[[gnu::always_inline]] inline bool split_varint(ByteSource& first, ByteSource& rest,
                                                std::uint64_t& v) {
  std::uint8_t b;
  if (!first.u8(b)) return false;
  v = b & 0x7f;
  if (!(b & 0x80)) [[likely]]
    return true;
  return split_varint_high(rest, v);
}

}  // namespace memtrail::format
