// Opening the golden session trace in the session tests.
#pragma once

#include <gtest/gtest.h>

#include "memtrail/session.hpp"
#include "session_trace.hpp"

namespace memtrail::test {

inline SessionOptions session_options() {
  SessionOptions o;
  o.analysis.symbolize = false;
  o.analysis.symbol_cache = false;
  o.analysis.large_block_bytes = 1000;  // the 1024 and 2048 blocks get lifetimes
  return o;
}

inline std::shared_ptr<const Session> open_session(const std::string& path,
                                                   const SessionOptions& o = session_options()) {
  OpenResult r = Session::open(path, o);
  EXPECT_TRUE(r.session) << r.message;
  return r.session;
}

}  // namespace memtrail::test
