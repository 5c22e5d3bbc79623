// The reader reports errors as one line of text; the session sorts them.
#pragma once

#include <string>

#include "memtrail/session.hpp"

namespace memtrail::detail {

// A TraceReader::header_error() line: cannot_open, not_a_trace or
// unsupported_version.
SessionError classify_header_error(const std::string& message);

}  // namespace memtrail::detail
