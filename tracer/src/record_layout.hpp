// The table records' layout in OPS, defined once: each record's fields in
// stream order after its op byte (kRecordBit | tag, format_layout.hpp). The
// writer (TraceWriter::add_*) writes records with write_record_fields, the
// decoder (ChunkDecoder::read_record) reads them with read_record_fields, and
// the model scan (model_scan.hpp) skips them with skip_record. A field added
// or reordered here changes all three; a writer or decoder whose values do
// not fit the fields does not compile.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

#include "byte_io.hpp"
#include "format_layout.hpp"

namespace memtrail::format {

// A field, named after the ByteSink / ByteSource call that writes / reads
// it. varint32 is written as a varint; the reader rejects values over 32 bits.
enum class RecordField : std::uint8_t { varint32, varint, svarint, u8, str };

namespace record_layout {
using enum RecordField;
inline constexpr std::array kString{varint32, str};  // id, text
// id, path, load address, start, end, build id
inline constexpr std::array kModule{varint32, str, varint, varint, varint, str};
inline constexpr std::array kThread{varint32, varint, str};  // id, tid, name
// id, parent, name, kind, space, device
inline constexpr std::array kPool{varint32, varint32, str, u8, u8, svarint};
inline constexpr std::array kStackNode{varint32, varint32, varint};  // id, parent, ip
inline constexpr std::array kScope{varint32, str, u8, varint32};     // id, name, kind, pool
inline constexpr std::array kThreadSwitch{varint32};                 // thread id

// id − the chunk's previous node id (0 at the chunk's start), id − parent,
// ip; both differences mod 2^32. Ids run up one by one and a parent is a
// recent node: as absolute varints zstd keeps 5.7 bytes a node of cc1plus's
// stack nodes, as these differences 0.85 (docs/BENCHMARKS.md, "where a
// trace's bytes go").
inline constexpr std::array kStackNodeDelta{varint32, varint32, varint};
}  // namespace record_layout

// The fields of the record with this tag; empty for an unknown tag.
constexpr std::span<const RecordField> record_fields(std::uint8_t tag) {
  switch (tag) {
    case kTagString:
      return record_layout::kString;
    case kTagModule:
      return record_layout::kModule;
    case kTagThread:
      return record_layout::kThread;
    case kTagPool:
      return record_layout::kPool;
    case kTagStackNode:
      return record_layout::kStackNode;
    case kTagStackNodeDelta:
      return record_layout::kStackNodeDelta;
    case kTagScope:
      return record_layout::kScope;
    case kTagThreadSwitch:
      return record_layout::kThreadSwitch;
    default:
      return {};
  }
}

namespace record_io {

template <RecordField F, class Sink, class V>
void write_field(Sink& out, const V& value) {
  if constexpr (F == RecordField::str) {
    static_assert(std::is_convertible_v<const V&, std::string_view>, "a str field takes text");
    out.str(value);
  } else {
    static_assert(std::is_integral_v<V> || std::is_enum_v<V>, "a number field takes a number");
    if constexpr (F == RecordField::u8)
      out.u8(static_cast<std::uint8_t>(value));
    else if constexpr (F == RecordField::svarint)
      out.svarint(static_cast<std::int64_t>(value));
    else
      out.varint(static_cast<std::uint64_t>(value));
  }
}

// The reader's types are exact: a field reads into the type its call fills.
template <RecordField F, class V>
bool read_field(ByteSource& in, V& value) {
  if constexpr (F == RecordField::varint32) {
    static_assert(std::is_same_v<V, std::uint32_t>);
    return in.varint32(value);
  } else if constexpr (F == RecordField::varint) {
    static_assert(std::is_same_v<V, std::uint64_t>);
    return in.varint(value);
  } else if constexpr (F == RecordField::svarint) {
    static_assert(std::is_same_v<V, std::int64_t>);
    return in.svarint(value);
  } else if constexpr (F == RecordField::u8) {
    static_assert(std::is_same_v<V, std::uint8_t>);
    return in.u8(value);
  } else {
    static_assert(std::is_same_v<V, std::string_view>);
    return in.str(value);
  }
}

inline bool skip_field(ByteSource& in, RecordField field) {
  std::uint32_t v32;
  std::uint64_t v;
  std::int64_t sv;
  std::uint8_t b;
  std::string_view text;
  switch (field) {
    case RecordField::varint32:
      return in.varint32(v32);
    case RecordField::varint:
      return in.varint(v);
    case RecordField::svarint:
      return in.svarint(sv);
    case RecordField::u8:
      return in.u8(b);
    case RecordField::str:
      return in.str(text);
  }
  return false;
}

}  // namespace record_io

// Writes the record's fields (not its op byte), one value per field, to a
// ByteSink or any sink with its u8 / varint / svarint / str calls (the
// writer's OPS buffer takes the thread switch directly).
template <RecordTag Tag, class Sink, class... Values>
[[gnu::always_inline]] inline void write_record_fields(Sink& out, const Values&... values) {
  static_assert(record_fields(Tag).size() == sizeof...(Values), "one value per field");
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (record_io::write_field<record_fields(Tag)[I]>(out, values), ...);
  }
  (std::index_sequence_for<Values...>{});
}

// Reads the record's fields (after its op byte) into `values`, one per
// field; false when one cannot be read (the stream ends, a varint32 is over
// 32 bits, a string is too long).
template <RecordTag Tag, class... Values>
bool read_record_fields(ByteSource& in, Values&... values) {
  static_assert(record_fields(Tag).size() == sizeof...(Values), "one value per field");
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return (record_io::read_field<record_fields(Tag)[I]>(in, values) && ...);
  }
  (std::index_sequence_for<Values...>{});
}

// Skips one record's fields as the decoder reads them; false where the
// decoder would fail (an unknown tag included).
inline bool skip_record(ByteSource& in, std::uint8_t tag) {
  std::span<const RecordField> fields = record_fields(tag);
  if (fields.empty()) return false;
  for (RecordField field : fields)
    if (!record_io::skip_field(in, field)) return false;
  return true;
}

}  // namespace memtrail::format
