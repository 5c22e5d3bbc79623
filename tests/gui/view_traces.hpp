// Golden traces for the Timeline, Fragmentation and OOM explainer tests,
// recorded at test time: samples/fragmentation traced through
// MEMTRAIL_OUTPUT, and an in-process trace (the allocator library over a
// 64 MiB device) that ends in an oom event, with a mark and a scope.
#pragma once

#include <QtTest>
#include <memory>
#include <string>

#include "memtrail/alloc/caching_pool.hpp"
#include "memtrail/alloc/virtual_resource.hpp"
#include "memtrail/recorder.hpp"
#include "memtrail/session.hpp"
#include "run_command.hpp"
#include "temp_dir.hpp"

namespace memtrail::test {

constexpr std::uint64_t kMiB = 1ull << 20;

// samples/fragmentation: three runs (caching pool, caching pool with
// expandable segments, BFC), 32 x (1.2 MiB kept + 18 MiB freed) each.
inline std::string record_fragmentation_sample(const TempDir& dir) {
  const std::string path = dir / "frag.mtr";
  auto r = run_command("MEMTRAIL_OUTPUT=" + shell_quote(path) + " " MEMTRAIL_FRAGMENTATION_BIN);
  if (r.exit_code != 0) qWarning("fragmentation sample failed: %s", r.err.c_str());
  return path;
}

// What record_oom_trace does, for the tests' expectations.
struct OomScenario {
  static constexpr int kSegments = 3;                   // 20 MiB each on a 64 MiB device
  static constexpr std::uint64_t kSmall = 1258291;      // kept: pins its segment
  static constexpr std::uint64_t kLarge = 18 * kMiB;    // freed: leaves an inactive split
  static constexpr std::uint64_t kRequest = 30 * kMiB;  // more than any free span: oom
  static constexpr const char* kMark = "segments filled";
  static constexpr const char* kScope = "fill";
};

// Fills three 20 MiB segments of a caching pool with a small and a large
// block each (inside scope "fill"), marks, frees the large blocks, then asks
// for 30 MiB: the device has 4 MiB left and every segment is pinned by its
// small block, so the pool records an oom. Returns the trace path.
inline std::string record_oom_trace(const TempDir& dir) {
  using namespace memtrail::alloc;
  const std::string path = dir / "oom.mtr";
  RecorderOptions options;
  options.output = path;
  options.sample_interval_ms = 0;
  if (!memtrail::start(options)) return path;
  {
    VirtualResource device(64 * kMiB, "64 MiB device");
    CachingPool pool(device, CachingConfig{}, "oom pool");
    const std::uint32_t scope = register_scope(OomScenario::kScope, ScopeKind::user, 0);
    std::vector<void*> small, large;
    record_scope_begin(scope);
    for (int i = 0; i < OomScenario::kSegments; ++i) {
      small.push_back(pool.malloc(OomScenario::kSmall));
      large.push_back(pool.malloc(OomScenario::kLarge));
    }
    record_scope_end(scope);
    record_mark(OomScenario::kMark);
    for (void* p : large) pool.free(p);
    try {
      pool.malloc(OomScenario::kRequest);
      qWarning("the 30 MiB request did not fail");
    } catch (const OutOfMemoryError&) {
    }
    for (void* p : small) pool.free(p);
  }
  memtrail::stop();
  return path;
}

inline std::shared_ptr<const Session> open_session(const std::string& path) {
  OpenResult r = Session::open(path);
  if (!r.session) qWarning("cannot open %s: %s", path.c_str(), r.message.c_str());
  return r.session;
}

}  // namespace memtrail::test
