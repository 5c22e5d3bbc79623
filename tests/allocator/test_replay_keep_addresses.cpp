// `memtrail replay --keep-addresses`: a trace replayed with the segment
// addresses the pool recorded reproduces the recorded pool's state exactly,
// where the virtual address scheme (ascending) breaks equal-size ties the
// other way. The recorded pool runs over an upstream that hands out real
// memory top-down, the way successive mmap calls do.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "memtrail/alloc/caching_pool.hpp"
#include "memtrail/alloc/replay.hpp"
#include "memtrail/alloc/virtual_resource.hpp"
#include "memtrail/recorder.hpp"
#include "pool_recording.hpp"
#include "test_util.hpp"

namespace {

using namespace memtrail::alloc;
using memtrail::test::run_command;
using memtrail::test::shell_quote;
using memtrail::test::TempDir;
constexpr std::uint64_t kMiB = 1ull << 20;

// Real memory, handed out from the top of a buffer downwards.
class TopDownArena final : public Upstream {
 public:
  explicit TopDownArena(std::size_t bytes)
      : Upstream("top-down arena", memtrail::MemorySpace::host, memtrail::PoolKind::system, nullptr,
                 0),
        buffer_(static_cast<char*>(std::aligned_alloc(2 * kMiB, bytes))),
        top_(bytes) {}
  ~TopDownArena() override { std::free(buffer_); }
  std::uint64_t capacity() const override { return UINT64_MAX; }

 protected:
  bool charges_process_limits() const override { return false; }
  void* acquire(std::size_t bytes, std::size_t, UpstreamFailure* why) override {
    if (bytes > top_) {
      if (why) why->message = "arena exhausted";
      return nullptr;
    }
    top_ -= bytes;
    return buffer_ + top_;
  }
  void give_back(void*, std::size_t, std::size_t) noexcept override {}

 private:
  char* buffer_;
  std::size_t top_;
};

struct StatsSink final : ReplaySink {
  std::map<std::string, std::int64_t> last;
  void on_stats(const ReplayOp&, const std::map<std::string, std::int64_t>& s) override {
    last = s;
  }
  void on_oom(const ReplayOp&, const std::string&) override {}
};

// Two 1 MiB free blocks in two segments tie for a 512 KiB request; PyTorch
// takes the lower address. With segments top-down that is the second
// segment, so freeing `c` leaves three inactive splits (2.5 MiB); ascending
// virtual addresses pick the first segment and leave one (512 KiB).
struct RecordedRun {
  TempDir dir;
  std::string trace = dir.path + "/pool.mtr";
  std::map<std::string, std::int64_t> stats;

  RecordedRun() {
    EXPECT_TRUE(memtrail::test::start_pool_recording(trace));
    {
      TopDownArena arena(16 * kMiB);
      CachingPool pool(arena, CachingConfig{}, "tensors");
      void* a = pool.malloc(kMiB);
      void* b = pool.malloc(kMiB);
      void* c = pool.malloc(kMiB);
      pool.free(a);
      void* d = pool.malloc(kMiB / 2);
      pool.free(c);
      stats = pool.memory_stats();
      pool.free(b);
      pool.free(d);
      pool.empty_cache();
    }
    memtrail::stop();
  }
};

std::map<std::string, std::int64_t> replay_until_last_free_of_c(const std::string& trace,
                                                                bool keep_addresses,
                                                                ReplayResult* result) {
  ReplayScript script = ReplayScript::from_trace(trace, "tensors");
  // alloc a, b, c, free a, alloc d, free c: stats there, before b and d go.
  EXPECT_GE(script.ops.size(), 6u);
  script.ops.resize(6);
  ReplayOp stats;
  stats.kind = ReplayOp::Kind::stats;
  script.ops.push_back(stats);
  ReplayOptions options;
  options.keep_addresses = keep_addresses;
  StatsSink sink;
  *result = run_replay(script, options, &sink);
  return sink.last;
}

TEST(ReplayKeepAddresses, RecordedAddressesReproduceTheRecordedPool) {
  RecordedRun run;
  ASSERT_EQ(run.stats.at("inactive_split.all.current"), 3);
  ASSERT_EQ(run.stats.at("inactive_split_bytes.all.current"),
            static_cast<std::int64_t>(5 * kMiB / 2));

  ReplayResult kept, virtual_scheme;
  auto with = replay_until_last_free_of_c(run.trace, true, &kept);
  for (const char* key :
       {"allocated_bytes.all.current", "reserved_bytes.all.current", "segment.all.current",
        "inactive_split.all.current", "inactive_split_bytes.all.current", "active.all.current"})
    EXPECT_EQ(with.at(key), run.stats.at(key)) << key;
  EXPECT_EQ(kept.addresses_kept, 2u);
  EXPECT_EQ(kept.addresses_skipped, 0u);

  auto without = replay_until_last_free_of_c(run.trace, false, &virtual_scheme);
  EXPECT_EQ(without.at("inactive_split.all.current"), 1);
  EXPECT_EQ(without.at("inactive_split_bytes.all.current"), static_cast<std::int64_t>(kMiB / 2));
  EXPECT_EQ(virtual_scheme.addresses_kept, 0u);
}

TEST(ReplayKeepAddresses, OverlappingAddressesFallBackToTheScheme) {
  VirtualResource device;
  const std::uint64_t base = 0x7f1234000000ull;
  device.plan_addresses({base, base + kMiB, base + 8 * kMiB});
  void* first = device.allocate_segment(2 * kMiB, 512);
  EXPECT_EQ(reinterpret_cast<std::uint64_t>(first), base);
  // base + 1 MiB lies inside the first segment: skipped, the scheme's first
  // address is used instead.
  void* second = device.allocate_segment(2 * kMiB, 512);
  EXPECT_EQ(reinterpret_cast<std::uint64_t>(second), VirtualResource::kFirstAddress);
  void* third = device.allocate_segment(2 * kMiB, 512);
  EXPECT_EQ(reinterpret_cast<std::uint64_t>(third), base + 8 * kMiB);
  EXPECT_EQ(device.planned_addresses_used(), 2u);
  EXPECT_EQ(device.planned_addresses_skipped(), 1u);
  // The plan is spent: the scheme continues past every range in use.
  void* fourth = device.allocate_segment(2 * kMiB, 512);
  EXPECT_EQ(reinterpret_cast<std::uint64_t>(fourth),
            VirtualResource::kFirstAddress + VirtualResource::kStride);
  for (void* p : {first, second, third, fourth}) device.release_segment(p, 2 * kMiB, 512);
  EXPECT_EQ(device.bytes_in_use(), 0u);
}

TEST(ReplayKeepAddresses, CliReportsKeptAddressesAndRefusesWhatItCannotKeep) {
  RecordedRun run;
  auto r = run_command(std::string(MEMTRAIL_CLI) + " replay " + shell_quote(run.trace) +
                       " --pool tensors --keep-addresses --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto summary = nlohmann::json::parse(r.out).at("replay_summary");
  EXPECT_EQ(summary.at("addresses_kept").get<int>(), 2);
  EXPECT_EQ(summary.at("addresses_skipped").get<int>(), 0);
  EXPECT_EQ(summary.at("mallocs").get<int>(), 4);

  auto text = run_command(std::string(MEMTRAIL_CLI) + " replay " + shell_quote(run.trace) +
                          " --pool tensors --keep-addresses");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("recorded addresses: 2 kept, 0 skipped"), std::string::npos) << text.out;

  // A script has no recorded addresses.
  std::string script = run.dir.file("s.txt", "A = malloc 1000\nfree A\n");
  auto bad = run_command(std::string(MEMTRAIL_CLI) + " replay " + shell_quote(script) +
                         " --keep-addresses");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "memtrail replay: --keep-addresses needs a trace (.mtr); '" + script +
                         "' is a replay script, whose segments have no recorded addresses\n");

  // The arena itself (pool 'top-down arena') never reserved segments.
  auto none = run_command(std::string(MEMTRAIL_CLI) + " replay " + shell_quote(run.trace) +
                          " --pool 'top-down arena' --keep-addresses");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("recorded no segment reserves for this pool"), std::string::npos)
      << none.err;
  EXPECT_EQ(none.err_lines(), 1);
}

}  // namespace
