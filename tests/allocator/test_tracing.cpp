// With tracing on, pools report every alloc, cache hit, free, segment
// reserve/release and OOM (with the pool state) under their own pool id;
// the recorded trace replays through `memtrail replay --pool`.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "memtrail/alloc/bfc_pool.hpp"
#include "memtrail/alloc/caching_pool.hpp"
#include "memtrail/alloc/virtual_resource.hpp"
#include "memtrail/recorder.hpp"
#include "memtrail/trace_file.hpp"
#include "pool_recording.hpp"
#include "test_util.hpp"

namespace {

using namespace memtrail::alloc;
constexpr std::uint64_t kMiB = 1ull << 20;

struct Collect final : memtrail::TraceVisitor {
  std::map<std::uint32_t, memtrail::PoolInfo> pools;
  std::map<std::uint32_t, std::string> strings;
  std::vector<memtrail::Event> events;
  void on_pool(const memtrail::PoolInfo& p) override { pools[p.id] = p; }
  void on_string(std::uint32_t id, std::string_view s) override { strings[id] = std::string(s); }
  void on_event(const memtrail::Event& e) override { events.push_back(e); }
  int count(std::uint32_t pool, memtrail::EventKind kind) const {
    int n = 0;
    for (const auto& e : events) n += e.pool == pool && e.kind == kind;
    return n;
  }
};

TEST(Tracing, PoolsEmitEveryEventWithTheirPoolId) {
  memtrail::test::TempDir dir;
  const std::string path = dir.path + "/pools.mtr";
  ASSERT_TRUE(memtrail::test::start_pool_recording(path));
  VirtualResource device(64 * kMiB);
  CachingPool caching(device, CachingConfig{}, "traced caching");
  BfcOptions bo;
  bo.preallocate = false;
  BfcPool bfc(device, bo, "traced bfc");
  {
    void* a = caching.malloc(3 * kMiB);  // segment_reserve + alloc
    caching.free(a);                     // free
    void* b = caching.malloc(3 * kMiB);  // reuse
    caching.free(b);
    caching.empty_cache();  // segment_release
    void* keep = caching.malloc(40 * kMiB);
    EXPECT_THROW(caching.malloc(30 * kMiB), OutOfMemoryError);  // oom
    caching.free(keep);
    void* c = bfc.allocate_raw(1000);  // segment_reserve + alloc
    bfc.deallocate_raw(c);
    void* d = bfc.allocate_raw(1000);  // reuse
    bfc.deallocate_raw(d);
  }
  memtrail::stop();

  memtrail::TraceReader reader(path);
  Collect got;
  auto result = reader.read(got);
  ASSERT_TRUE(result.ok) << result.error;
  const std::uint32_t cp = caching.pool_id(), bp = bfc.pool_id();
  ASSERT_TRUE(got.pools.count(cp));
  EXPECT_EQ(got.pools[cp].name, "traced caching");
  EXPECT_EQ(got.pools[cp].kind, memtrail::PoolKind::caching);
  EXPECT_EQ(got.pools[cp].parent, device.pool_id());
  EXPECT_EQ(got.pools[bp].kind, memtrail::PoolKind::bfc);
  using K = memtrail::EventKind;
  EXPECT_EQ(got.count(cp, K::segment_reserve), 2);
  EXPECT_EQ(got.count(cp, K::alloc), 2);
  EXPECT_EQ(got.count(cp, K::reuse), 1);
  EXPECT_EQ(got.count(cp, K::free), 3);
  EXPECT_EQ(got.count(cp, K::segment_release), 1);  // the 40 MiB segment stays cached
  ASSERT_EQ(got.count(cp, K::oom), 1);
  EXPECT_EQ(got.count(bp, K::segment_reserve), 1);
  EXPECT_EQ(got.count(bp, K::alloc), 1);
  EXPECT_EQ(got.count(bp, K::reuse), 1);
  EXPECT_EQ(got.count(bp, K::free), 2);
  for (const auto& e : got.events) {
    if (e.pool != cp || e.kind != K::oom) continue;
    EXPECT_EQ(e.size, 30 * kMiB);
    auto state = nlohmann::json::parse(got.strings.at(static_cast<std::uint32_t>(e.aux)));
    EXPECT_EQ(state.at("alloc_size"), 30 * kMiB);
    ASSERT_EQ(state.at("segments").size(), 1u);
    EXPECT_EQ(state.at("segments")[0].at("total_size"), 40 * kMiB);
    EXPECT_EQ(state.at("stats").at("num_ooms"), 1);
  }

  // The recorded pool replays through the CLI.
  auto r = memtrail::test::run_command(std::string(MEMTRAIL_CLI) + " replay " +
                                       memtrail::test::shell_quote(path) +
                                       " --pool 'traced caching' --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto summary = nlohmann::json::parse(r.out_lines().back()).at("replay_summary");
  EXPECT_EQ(summary.at("mallocs"), 3);  // the OOM'd request never became an alloc event
  EXPECT_EQ(summary.at("frees"), 3);
  // The trace holds allocs and frees, not the program's empty_cache() call:
  // the replayed pool keeps the 20 MiB segment cached beside the 40 MiB one.
  EXPECT_EQ(summary.at("peak_reserved_bytes"), 60 * kMiB);
  auto missing = memtrail::test::run_command(std::string(MEMTRAIL_CLI) + " replay " +
                                             memtrail::test::shell_quote(path) + " --pool nope");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no pool named 'nope' (pools: "), std::string::npos) << missing.err;
}

}  // namespace
