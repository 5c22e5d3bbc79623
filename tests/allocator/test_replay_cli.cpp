// `memtrail replay` end to end: the worked replays of the reference notes
// (pytorch-jax-allocators.md §1.8), every row and column, with and without
// max_split_size_mb:20, plus the CLI's errors and summaries.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.hpp"

namespace {

using memtrail::test::run_command;
using memtrail::test::shell_quote;
using memtrail::test::TempDir;
using nlohmann::json;

struct Row {
  std::int64_t allocated, reserved, requested, segments, inactive_split, inactive_split_bytes;
};

std::vector<json> json_lines(const memtrail::test::CommandResult& r) {
  std::vector<json> out;
  for (const std::string& l : r.out_lines())
    if (!l.empty() && l[0] == '{') out.push_back(json::parse(l));
  return out;
}

void expect_row(const json& stats, const Row& row, int index) {
  SCOPED_TRACE("row " + std::to_string(index));
  EXPECT_EQ(stats.at("allocated_bytes.all.current").get<std::int64_t>(), row.allocated);
  EXPECT_EQ(stats.at("reserved_bytes.all.current").get<std::int64_t>(), row.reserved);
  EXPECT_EQ(stats.at("requested_bytes.all.current").get<std::int64_t>(), row.requested);
  EXPECT_EQ(stats.at("segment.all.current").get<std::int64_t>(), row.segments);
  EXPECT_EQ(stats.at("inactive_split.all.current").get<std::int64_t>(), row.inactive_split);
  EXPECT_EQ(stats.at("inactive_split_bytes.all.current").get<std::int64_t>(),
            row.inactive_split_bytes);
}

const char* kWorkedScript = R"(# reference §1.8, one stats line per table row
A = malloc 1000
stats
B = malloc 3 MiB
stats
C = malloc 12MiB
stats
D = malloc 25000000
stats
free B
stats
free C
stats
E = malloc 1000
stats
empty_cache
stats
free A
free E
empty_cache
stats
)";

TEST(ReplayCli, WorkedReplayMatchesReferenceTableExactly) {
  TempDir dir;
  auto r = run_command(std::string(MEMTRAIL_CLI) + " replay " +
                       shell_quote(dir.file("w.txt", kWorkedScript)) + " --allocator caching");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<Row> table = {
      {1024, 2097152, 1000, 1, 1, 2096128},           {3146752, 23068672, 3146728, 2, 2, 19921920},
      {15729664, 23068672, 15729640, 2, 2, 7339008},  {40895488, 48234496, 40729640, 3, 2, 7339008},
      {37749760, 48234496, 37583912, 3, 3, 10484736}, {25166848, 48234496, 25001000, 3, 1, 2096128},
      {25167872, 48234496, 25002000, 3, 1, 2095104},  {25167872, 27262976, 25002000, 2, 1, 2095104},
      {25165824, 25165824, 25000000, 1, 0, 0},
  };
  auto lines = json_lines(r);
  ASSERT_EQ(lines.size(), table.size());
  for (std::size_t i = 0; i < table.size(); ++i)
    expect_row(lines[i], table[i], static_cast<int>(i));
  // The D block is 25000448 bytes in a 25165824-byte segment, unsplit.
  EXPECT_EQ(lines[3].at("allocation.large_pool.current"), 3);
  EXPECT_EQ(lines[3].at("segment.small_pool.current"), 1);
  EXPECT_EQ(lines[8].at("num_device_free"), 2);
  EXPECT_EQ(lines[8].at("num_sync_all_streams"), 2);
  EXPECT_EQ(lines[8].at("max_split_size"), -1);
  EXPECT_NE(r.out.find("peak reserved:      46.00 MiB (48234496 bytes)"), std::string::npos);
  EXPECT_NE(r.out.find("OOMs:               0"), std::string::npos);
}

TEST(ReplayCli, MaxSplitSize20DemoMatchesReference) {
  TempDir dir;
  const char* script =
      "X = malloc 24MiB\nfree X\nstats\nY = malloc 5MiB\nstats\nZ = malloc 21MiB\nstats\n";
  auto r = run_command(std::string(MEMTRAIL_CLI) + " replay " +
                       shell_quote(dir.file("s.txt", script)) + " --conf max_split_size_mb:20");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = json_lines(r);
  ASSERT_EQ(lines.size(), 3u);
  expect_row(lines[0], {0, 25165824, 0, 1, 0, 0}, 0);
  // 5 MiB cannot use the cached oversize 24 MiB block: a new 20 MiB segment.
  expect_row(lines[1], {5242880, 46137344, 5242880, 2, 1, 15728640}, 1);
  // 21 MiB takes the whole 24 MiB block (24 < 21 + 20), unsplit.
  expect_row(lines[2], {30408704, 46137344, 27262976, 2, 1, 15728640}, 2);
  EXPECT_EQ(lines[2].at("max_split_size"), 20 << 20);
  EXPECT_EQ(lines[2].at("oversize_allocations.current"), 1);
  EXPECT_EQ(lines[2].at("oversize_segments.current"), 2);
}

TEST(ReplayCli, JsonSummaryAndOomCountWithCapacity) {
  TempDir dir;
  const char* script = "A = malloc 30MiB\nB = malloc 30MiB\nfree A\nC = malloc 10MiB\n";
  auto r = run_command(std::string(MEMTRAIL_CLI) + " replay " +
                       shell_quote(dir.file("s.txt", script)) + " --capacity 50MiB --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = json_lines(r);
  ASSERT_EQ(lines.size(), 2u);
  const json& oom = lines[0].at("oom");
  EXPECT_EQ(oom.at("line"), 2);
  EXPECT_EQ(oom.at("message").get<std::string>().rfind(
                "CUDA out of memory. Tried to allocate 30.00 MiB. GPU 0 has a total capacity of "
                "50.00 MiB of which 20.00 MiB is free.",
                0),
            0u)
      << oom.at("message");
  const json& s = lines[1].at("replay_summary");
  EXPECT_EQ(s.at("ooms"), 1);
  EXPECT_EQ(s.at("mallocs"), 3);
  EXPECT_EQ(s.at("peak_reserved_bytes"), 30 << 20);
  // C splits A's cached 30 MiB segment (no max_split_size: nothing is oversize).
  EXPECT_EQ(s.at("final_allocated_bytes"), 10 << 20);
  EXPECT_EQ(s.at("final_reserved_bytes"), 30 << 20);
}

TEST(ReplayCli, BfcAndMallocPolicies) {
  TempDir dir;
  const char* script = "A = malloc 1000\nB = malloc 3MiB\nfree A\nstats\n";
  auto bfc = run_command(std::string(MEMTRAIL_CLI) + " replay " +
                         shell_quote(dir.file("s.txt", script)) + " --allocator bfc --json");
  ASSERT_EQ(bfc.exit_code, 0) << bfc.err;
  auto lines = json_lines(bfc);
  ASSERT_EQ(lines.size(), 2u);
  // Growth: a 2 MiB region for A, then a 4 MiB one for B. B takes the whole
  // 4 MiB chunk: it is less than twice 3 MiB and the waste is under 128 MiB.
  EXPECT_EQ(lines[0].at("bytes_in_use"), 4 << 20);
  EXPECT_EQ(lines[0].at("pool_bytes"), (2 << 20) + (4 << 20));
  EXPECT_EQ(lines[0].at("num_allocs"), 2);
  auto plain = run_command(std::string(MEMTRAIL_CLI) + " replay " +
                           shell_quote(dir.path + "/s.txt") + " --allocator malloc --json");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  lines = json_lines(plain);
  EXPECT_EQ(lines[0].at("reserved_bytes"), 3145728);
  EXPECT_EQ(lines[1].at("replay_summary").at("peak_fragmentation_bytes"), 0);
}

TEST(ReplayCli, StreamsRecordStreamAndSynchronize) {
  TempDir dir;
  const char* script =
      "A = malloc 1000 stream=1\n"
      "record_stream A 2\n"
      "free A\n"
      "stats  # A awaits stream 2\n"
      "B = malloc 1000 stream=1\n"
      "stats  # not reusable yet: a second block\n"
      "synchronize 2\n"
      "C = malloc 1000 stream=1  # processes the event first, then reuses A\n"
      "stats\n";
  auto r =
      run_command(std::string(MEMTRAIL_CLI) + " replay " + shell_quote(dir.file("s.txt", script)));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = json_lines(r);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].at("allocation.all.current"), 0);
  EXPECT_EQ(lines[0].at("active.all.current"), 1);
  EXPECT_EQ(lines[1].at("active.all.current"), 2);
  EXPECT_EQ(lines[2].at("active.all.current"), 2);
  EXPECT_EQ(lines[2].at("allocation.all.current"), 2);
  EXPECT_EQ(lines[2].at("segment.all.current"), 1);
}

struct CliError {
  std::string script, args, message;
};

TEST(ReplayCli, ErrorsAreOneLineWithExitCode2) {
  TempDir dir;
  const std::vector<CliError> cases = {
      {"A = malloc 10\nfree B\n", "", "s.txt:2: free of unknown name 'B'"},
      {"A = malloc 10\nfree A\nfree A\n", "", "s.txt:3: free of 'A', which was already freed"},
      {"A = malloc 10\nA = malloc 10\n", "", "s.txt:2: 'A' is still live"},
      {"# c\n\nA = malloc 12 XB\n", "", "s.txt:3: bad size '12 XB': unknown unit 'XB'"},
      {"mallocc 5\n", "", "s.txt:1: unknown operation 'mallocc 5'"},
      {"stats\n", "--conf max_split_size_mb:19", "max_split_size_mb: 19 is too small"},
      {"stats\n", "--conf foo:1", "unknown key 'foo'"},
      {"stats\n", "--allocator tcmalloc", "unknown allocator 'tcmalloc'"},
      {"stats\n", "--capacity lots", "--capacity 'lots'"},
      {"stats\n", "--frobnicate", "unknown option '--frobnicate'"},
      {"record_stream A 2\n", "", "s.txt:1: record_stream of unknown name 'A'"},
      {"synchronize x\n", "", "s.txt:1: 'x' is not a stream number"},
      {"A = malloc\n", "", "s.txt:1: malloc needs a size"},
  };
  for (const CliError& c : cases) {
    SCOPED_TRACE(c.message);
    auto r = run_command(std::string("cd ") + shell_quote(dir.path) + " && " + MEMTRAIL_CLI +
                         " replay " + shell_quote(dir.file("s.txt", c.script)) + " " + c.args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  // A file with the trace magic but nothing valid after it.
  const std::string bad = dir.file("bad.mtr", std::string("\x89MTRACE\n") + "garbage");
  auto corrupt = run_command(std::string(MEMTRAIL_CLI) + " replay " + shell_quote(bad));
  EXPECT_EQ(corrupt.exit_code, 2);
  EXPECT_NE(corrupt.err.find("bad.mtr"), std::string::npos) << corrupt.err;
  EXPECT_EQ(std::count(corrupt.err.begin(), corrupt.err.end(), '\n'), 1) << corrupt.err;
  auto missing = run_command(std::string(MEMTRAIL_CLI) + " replay /nonexistent/script.txt");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("/nonexistent/script.txt: cannot open"), std::string::npos);
}

}  // namespace
