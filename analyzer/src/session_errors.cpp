// Names of the session's stages and errors, and the reader's one-line
// errors sorted into SessionError.
#include <string>

#include "memtrail/session.hpp"
#include "session_errors.hpp"

namespace memtrail {

const char* stage_name(LoadStage s) {
  switch (s) {
    case LoadStage::opening:
      return "opening";
    case LoadStage::reading:
      return "reading events";
    case LoadStage::finishing:
      return "finishing";
    case LoadStage::symbolizing:
      return "symbolizing";
    case LoadStage::done:
      return "done";
  }
  return "?";
}

const char* error_name(SessionError e) {
  switch (e) {
    case SessionError::none:
      return "none";
    case SessionError::cannot_open:
      return "cannot open";
    case SessionError::not_a_trace:
      return "not a trace";
    case SessionError::unsupported_version:
      return "unsupported version";
    case SessionError::corrupt:
      return "corrupt";
    case SessionError::truncated:
      return "truncated";
    case SessionError::mark_not_found:
      return "mark not found";
    case SessionError::cancelled:
      return "cancelled";
  }
  return "?";
}

namespace detail {

SessionError classify_header_error(const std::string& m) {
  auto has = [&](const char* s) { return m.find(s) != std::string::npos; };
  if (has(": cannot open") || has(": is a directory") || has(": is a pipe") ||
      has(": not a regular file"))
    return SessionError::cannot_open;
  if (has(": unsupported version") || has(": unsupported header flags"))
    return SessionError::unsupported_version;
  return SessionError::not_a_trace;  // bad magic, cut or undecodable header
}

}  // namespace detail
}  // namespace memtrail
