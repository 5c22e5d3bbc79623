// The state of an open Session, shared by the session_*.cpp files: what the
// pass built (whole(), the taps' series, scopes and ooms), the symbol cache
// and the replay of the file up to a moment.
#pragma once

#include <sys/stat.h>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "checkpoints.hpp"
#include "engine.hpp"
#include "memtrail/session.hpp"
#include "series_index.hpp"
#include "session_taps.hpp"

namespace memtrail {

namespace detail {

// Session::Impl's contents, in a struct of its own so the helpers of the
// session_*.cpp files can take it (Session::Impl is private).
struct SessionState {
  std::string path;
  std::uint64_t file_bytes = 0;
  struct timespec mtime {};
  SessionOptions options;
  Analysis whole;
  std::unique_ptr<SessionTaps> taps;
  std::vector<SeriesTrack> fragmentation;  // by pool id, from whole()
  std::vector<SeriesInfo> series;
  std::uint64_t first_ns = 0, last_ns = 0;  // of the whole file
  std::vector<bool> upstream;               // by pool id
  Checkpoints checkpoints;

  mutable std::mutex symbols_mu;
  mutable std::unique_ptr<Symbolizer> symbolizer;  // created on first need
  // Stacks of whole()'s sites answer from the site (no second copy of
  // their frames); other stacks are resolved once and kept.
  // (stack id, site index) sorted by stack: a hash map took 2.6 MiB at 10^5
  // sites, this 0.9.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> site_of_stack;
  // The whole() site recorded with `stack`, or null.
  const Site* site_with_stack(StackId stack) const;
  mutable std::unordered_map<StackId, std::vector<Frame>> frames;

  bool analyzed(PoolId pool) const { return whole.pool(pool) != nullptr; }
  const SeriesTrack* track(const SeriesId& id) const;
  // The Engine's state just after the last event at or before t, from the
  // nearest checkpoint; null with `error` set when the file changed or
  // cannot be read again.
  std::unique_ptr<Engine> replay_to(std::uint64_t t, std::string& error) const {
    return replay(t, kNoPosition, error);
  }
  // The same just after the file's first `events` events.
  std::unique_ptr<Engine> replay_to_position(std::uint64_t events, std::string& error) const {
    return replay(kTimeMax, events, error);
  }
  static constexpr std::uint64_t kNoPosition = ~std::uint64_t{0};
  std::unique_ptr<Engine> replay(std::uint64_t t, std::uint64_t events, std::string& error) const;
  // whole()'s analysis options for a replay (all of the session's pools).
  AnalysisOptions replay_options() const;
};

}  // namespace detail

struct Session::Impl : detail::SessionState {};

}  // namespace memtrail
