// The block trackers' tests (test_block_trackers.cpp, test_pool_trackers.cpp,
// test_leak_counts.cpp): the Engine's pass alone or with one tracker's
// finish, and one trace analysed as the CLI and as the GUI do.
#pragma once

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "engine.hpp"
#include "memtrail/analysis.hpp"
#include "memtrail/session.hpp"
#include "session_test_util.hpp"

namespace memtrail::test {

inline AnalysisOptions no_symbols() {
  AnalysisOptions o;
  o.symbolize = false;
  o.symbol_cache = false;
  return o;
}

// The Engine's pass over `path`: its own figures only (no `Trackers`), or
// with the finish of each of `Trackers` after it, as the analysis pass runs
// them.
template <class... Trackers>
Analysis engine_pass(const std::string& path, const AnalysisOptions& o = no_symbols()) {
  Analysis a;
  a.path = path;
  detail::Engine engine(o, {});
  TraceReader reader(path);
  EXPECT_TRUE(reader.read(engine).ok);
  engine.finish(a);
  (engine.block_trackers().get<Trackers>().finish(a), ...);
  return a;
}

// One trace analysed as `report` does (`analyze()`) and as the GUI does (a
// session's whole-trace analysis), with the session tests' options (large
// blocks from 1,000 B).
struct CliAndGui {
  Analysis cli;
  std::shared_ptr<const Session> session;
  const Analysis& gui() const { return session->whole(); }
};

inline CliAndGui analyze_as_cli_and_gui(const std::string& path) {
  const SessionOptions options = test::session_options();
  CliAndGui both{analyze(path, options.analysis), test::open_session(path, options)};
  EXPECT_TRUE(both.cli.error.empty()) << both.cli.error;
  return both;
}

}  // namespace memtrail::test
