// How chunk decoding fails: a DecodeError carries the one-line reason, which
// the read turns into ReadResult::error with the chunk's byte offset. The
// checks of the decode loop are inline; only their error paths are calls.
#pragma once

#include <cstdint>
#include <string>

namespace memtrail::reader {

// Thrown inside chunk decoding; turned into ReadResult::error.
struct DecodeError {
  std::string what;
};

[[noreturn, gnu::noinline, gnu::cold]] inline void undefined_reference(const char* table,
                                                                       std::uint32_t id) {
  throw DecodeError{std::string("reference to undefined ") + table + " " + std::to_string(id)};
}

[[noreturn, gnu::noinline, gnu::cold]] inline void undecodable(const char* what) {
  throw DecodeError{std::string("undecodable ") + what};
}

// A check of the decode loop: inline, only the error path is a call.
[[gnu::always_inline]] inline void need(bool ok, const char* what) {
  if (!ok) [[unlikely]]
    undecodable(what);
}

}  // namespace memtrail::reader
