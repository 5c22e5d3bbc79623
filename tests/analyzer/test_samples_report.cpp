// Golden report layout on traces of real programs (issue 20): sites grouped
// by symbolized stack, callers past the allocation machinery, leak order and
// wording, the heap pool's reserved bytes, and every export's leak cost.
// Each program is traced once per test binary.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "cli_runner.hpp"
#include "memtrail/analysis.hpp"
#include "memtrail/report_json.hpp"
#include "temp_dir.hpp"

namespace memtrail {
namespace {

using nlohmann::json;
using test::memtrail;
using test::shell_quote;

class SampleReports : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir("report-layout");
    for (auto [name, bin] :
         {std::pair{"leaks", MEMTRAIL_LEAKS_BIN}, std::pair{"unrolled", MEMTRAIL_UNROLLED_BIN}}) {
      auto r = memtrail("run -o " + shell_quote(dir_->file(name)) + " -- " + bin);
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string trace(const char* name) { return shell_quote(dir_->file(name)); }
  static json report_json(const std::string& args) {
    auto r = memtrail("report --json --top 0 " + args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? json::parse(r.out) : json();
  }
  static std::string report_text(const std::string& args) {
    auto r = memtrail("report " + args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }
  static test::TempDir* dir_;
};

test::TempDir* SampleReports::dir_ = nullptr;

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Leak sites (kind, bytes, blocks) whose caller names `function`.
std::vector<std::tuple<std::string, std::uint64_t, std::uint64_t>> leak_sites(
    const json& j, const std::string& function) {
  std::vector<std::tuple<std::string, std::uint64_t, std::uint64_t>> out;
  for (const auto& s : j["leaks"]["sites"])
    if (s["caller"].get<std::string>().find(function) != std::string::npos)
      out.emplace_back(s["kind"], s["bytes"], s["blocks"]);
  return out;
}

using Entries = std::vector<std::tuple<std::string, std::uint64_t, std::uint64_t>>;

TEST_F(SampleReports, UnrolledLoopAndThreadLeakAreOneSiteEach) {
  json j = report_json(trace("unrolled"));
  EXPECT_EQ(leak_sites(j, "leak_unrolled"), (Entries{{"direct", 600, 3}}));
  EXPECT_EQ(leak_sites(j, "leak_in_thread"), (Entries{{"direct", 2048, 4}}));
  std::string text = report_text(trace("unrolled"));
  EXPECT_EQ(occurrences(text, "direct leak: "), 2u) << text;
  EXPECT_EQ(occurrences(text, "direct leak: 600 B in 3 blocks"), 1u) << text;
  EXPECT_EQ(occurrences(text, "direct leak: 2.00 KiB in 4 blocks"), 1u) << text;
}

TEST_F(SampleReports, GroupByAddressKeepsOneSitePerReturnAddress) {
  json j = report_json("--group-by-address " + trace("unrolled"));
  EXPECT_EQ(leak_sites(j, "leak_unrolled"),
            (Entries{{"direct", 300, 1}, {"direct", 200, 1}, {"direct", 100, 1}}));
}

// Every consumer of sites sees the grouped ones: the full JSON export and
// check's leak list.
TEST_F(SampleReports, ExportAndCheckShowGroupedSites) {
  auto e = memtrail("export --format json " + trace("unrolled"));
  ASSERT_EQ(e.exit_code, 0) << e.err;
  std::size_t unrolled_sites = 0;
  json exported = json::parse(e.out);  // a named json: the loop reads into it
  for (const auto& s : exported["sites"])
    if (s["caller"].get<std::string>().find("leak_unrolled") != std::string::npos) {
      ++unrolled_sites;
      EXPECT_EQ(s["leaked_bytes"], 600);
    }
  EXPECT_EQ(unrolled_sites, 1u);
  auto c = memtrail("check --max-leaked 0 " + trace("unrolled"));
  EXPECT_EQ(c.exit_code, 1) << c.err;
  EXPECT_EQ(occurrences(c.out + c.err, "leak of 600 bytes in 3 blocks"), 1u) << c.out << c.err;
}

TEST_F(SampleReports, OneLineListsNameTheCallerPastMallocAndStrdup) {
  json j = report_json(trace("leaks"));
  auto strdup_site = leak_sites(j, "leak_strdup");
  EXPECT_EQ(strdup_site, (Entries{{"direct", 21, 1}}));
  for (const auto& s : j["leaks"]["sites"])
    if (s["bytes"] == 21) {
      EXPECT_EQ(s["stack"][0]["function"], "__strdup");  // the backtrace keeps it
      std::string caller = s["caller"];
      EXPECT_NE(caller.find("leak_strdup() at "), std::string::npos) << caller;
      EXPECT_EQ(caller.substr(caller.size() - 8), " (leaks)") << caller;
    }
  std::string text = report_text("--top 50 " + trace("leaks"));
  // Each top-list line is followed by the site's backtrace.
  auto at = text.find("TOP SITES BY ALLOCATIONS");
  ASSERT_NE(at, std::string::npos);
  auto line_end = text.find('\n', text.find('\n', at) + 1);
  std::string first = text.substr(text.find('\n', at) + 1, line_end - text.find('\n', at) - 1);
  EXPECT_NE(first.find("25 calls"), std::string::npos) << first;
  EXPECT_NE(first.find("make_temporaries() at "), std::string::npos) << first;
  EXPECT_EQ(text.compare(line_end + 1, 26, "      (anonymous namespace"), 0)
      << text.substr(line_end + 1, 80);
}

TEST_F(SampleReports, NumCallersLimitsEachBacktrace) {
  std::string text = report_text("--num-callers 1 " + trace("unrolled"));
  // leak_unrolled <- main <- __libc_start_call_main <- __libc_start_main <- _start
  EXPECT_NE(text.find("direct leak: 600 B in 3 blocks [malloc]\n"
                      "    (anonymous namespace)::leak_unrolled() at "),
            std::string::npos)
      << text;
  EXPECT_EQ(occurrences(text, "\n    ... 4 more frames\n"), 1u) << text;
  auto bad = memtrail("report --num-callers 0 " + trace("unrolled"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err_lines(), 1) << bad.err;
  EXPECT_NE(bad.err.find("--num-callers 0"), std::string::npos) << bad.err;
}

TEST_F(SampleReports, CheckAndDiffTakeNumCallersToo) {
  // check prints Valgrind's 12 frames by default: all 5 of leak_unrolled's.
  auto full = memtrail("check " + trace("unrolled"));
  EXPECT_EQ(full.exit_code, 1) << full.err;
  EXPECT_NE(full.err.find("    #0 (anonymous namespace)::leak_unrolled() at "), std::string::npos)
      << full.err;
  EXPECT_NE(full.err.find("    #4 _start\n"), std::string::npos) << full.err;
  EXPECT_EQ(occurrences(full.err, "more frames"), 0u) << full.err;

  auto one = memtrail("check --num-callers 1 " + trace("unrolled"));
  EXPECT_EQ(one.exit_code, 1) << one.err;
  EXPECT_EQ(occurrences(one.err, "    #1 "), 0u) << one.err;
  EXPECT_EQ(occurrences(one.err, "\n    ... 4 more frames\n"), 1u) << one.err;

  // diff of a trace with itself lists no site; against the leaks sample
  // every site of both is listed with --num-callers frames.
  auto d = memtrail("diff --top 0 --num-callers 2 " + trace("unrolled") + " " + trace("leaks"));
  EXPECT_EQ(d.exit_code, 0) << d.err;
  EXPECT_NE(d.out.find("    main at "), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("\n    ... 3 more frames\n"), std::string::npos) << d.out;
  EXPECT_EQ(occurrences(d.out, "__libc_start_call_main"), 0u) << d.out;

  for (const char* command : {"check", "diff"}) {
    auto bad = memtrail(std::string(command) + " --num-callers 501 " + trace("unrolled") + " " +
                        trace("unrolled"));
    EXPECT_EQ(bad.exit_code, 2) << command;
    EXPECT_EQ(bad.err_lines(), 1) << bad.err;
    EXPECT_NE(bad.err.find("--num-callers 501: expected 1 to 500 frames"), std::string::npos)
        << bad.err;
  }
}

TEST_F(SampleReports, LeaksAreDirectThenIndirectThenReachable) {
  json j = report_json(trace("leaks"));
  std::string kinds;
  for (const auto& s : j["leaks"]["sites"]) {
    char k = s["kind"].get<std::string>()[0];
    if (kinds.empty() || kinds.back() != k) kinds += k;
  }
  EXPECT_EQ(kinds, "dipr");  // direct, indirect, possible (the interior pointer), reachable
  std::string text = report_text("--top 50 " + trace("leaks"));
  EXPECT_NE(text.find("direct leak: 640 B in 1 block [malloc]\n"), std::string::npos) << text;
  EXPECT_LT(text.rfind("\n  direct leak: "), text.find("\n  indirect leak: 288 B in 9 blocks"));
  EXPECT_NE(text.find("  leaked                 8.87 KiB in 22 blocks\n"), std::string::npos);
  const std::string last = "\nSUMMARY: memtrail: 9085 byte(s) leaked in 22 allocation(s).\n";
  ASSERT_GE(text.size(), last.size());
  EXPECT_EQ(text.substr(text.size() - last.size()), last);
}

// The heap pool's reserved bytes are the glibc samples' (as the summary's).
TEST_F(SampleReports, HeapPoolReservedComesFromTheGlibcSamples) {
  json j = report_json(trace("leaks"));
  std::uint64_t sampled = j["summary"]["peak_heap_reserved_bytes"];
  ASSERT_GT(j["summary"]["samples"].get<std::uint64_t>(), 0u);
  const json* heap = nullptr;
  for (const auto& p : j["pools"])
    if (p["name"] == "malloc") heap = &p;
  ASSERT_NE(heap, nullptr);
  EXPECT_EQ((*heap)["peak_reserved_bytes"], sampled);
  EXPECT_EQ((*heap)["final_reserved_bytes"], j["timeline"]["heap_reserved"]["value"].back());
  auto e = memtrail("export --format json " + trace("leaks"));
  ASSERT_EQ(e.exit_code, 0) << e.err;
  json exported = json::parse(e.out);
  for (const auto& p : exported["pools"])
    if (p["name"] == "malloc") {
      EXPECT_EQ(p["timeline"]["reserved"], j["timeline"]["heap_reserved"]);
    }
}

// `export` counts as leaked what `report` does: direct + indirect, never
// reachable, leaf pools only.
TEST_F(SampleReports, EveryExportsLeakCostEqualsTheReport) {
  json j = report_json(trace("leaks"));
  std::uint64_t leaked = j["summary"]["leaked_bytes"];
  EXPECT_EQ(leaked, 9085u);

  auto folded = memtrail("export --format folded --cost leaked " + trace("leaks"));
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  std::uint64_t folded_sum = 0;
  for (const auto& line : folded.out_lines())
    folded_sum += std::stoull(line.substr(line.rfind(' ') + 1));
  EXPECT_EQ(folded_sum, leaked);

  auto full = memtrail("export --format json " + trace("leaks"));
  ASSERT_EQ(full.exit_code, 0) << full.err;
  json fj = json::parse(full.out);
  std::uint64_t json_sum = 0;
  for (const auto& s : fj["sites"]) json_sum += s["leaked_bytes"].get<std::uint64_t>();
  EXPECT_EQ(json_sum, leaked);

  std::string db = dir_->file("leaks.sqlite");
  auto sq = memtrail("export --format sqlite -o " + shell_quote(db) + " " + trace("leaks"));
  ASSERT_EQ(sq.exit_code, 0) << sq.err;
  auto sum =
      test::run_command("sqlite3 " + shell_quote(db) + " 'SELECT SUM(leaked_bytes) FROM leaks'");
  ASSERT_EQ(sum.exit_code, 0) << sum.err;
  EXPECT_EQ(sum.out, std::to_string(leaked) + "\n");
}

// heaptrack's --filter-bt-function: only the allocations through a function,
// and the sums over sites (leaks, allocations, the SUMMARY line) follow.
TEST_F(SampleReports, FilterFunctionKeepsTheSitesThroughIt) {
  auto r = memtrail("report --json --top 0 --filter-function leak_plain_mallocs " + trace("leaks"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("keeps 3 of "), std::string::npos) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["filter"]["sites_kept"], 3);
  EXPECT_EQ(j["summary"]["leaked_bytes"], 600);
  EXPECT_EQ(j["summary"]["leaked_blocks"], 3);
  EXPECT_EQ(j["summary"]["allocations"], 3);
  EXPECT_EQ(j["leaks"]["reachable_bytes"], 0);
  EXPECT_EQ(j["leaks"]["possible_bytes"], 0);  // make_reachable()'s 100 B are filtered out
  EXPECT_EQ(j["leaks"]["sites"].size(), 3u);
  json only_possible = report_json("--filter-function make_reachable " + trace("leaks"));
  EXPECT_EQ(only_possible["leaks"]["possible_bytes"], 100);
  EXPECT_EQ(only_possible["leaks"]["possible_blocks"], 1);
  std::string text = report_text("--filter-function leak_plain_mallocs " + trace("leaks"));
  EXPECT_NE(text.find("\nSUMMARY: memtrail: 600 byte(s) leaked in 3 allocation(s).\n"),
            std::string::npos)
      << text;
  auto bad = memtrail("report --filter-function= " + trace("leaks"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err_lines(), 1) << bad.err;
  EXPECT_NE(bad.err.find("--filter-function needs a function name"), std::string::npos);
}

// The JSON export names each site and each frame once; the lists refer to
// them by id, and --top N keeps N per list and only the sites they name.
TEST_F(SampleReports, JsonExportWritesSitesAndFramesOnce) {
  auto e = memtrail("export --format json " + trace("leaks"));
  ASSERT_EQ(e.exit_code, 0) << e.err;
  json j = json::parse(e.out);
  EXPECT_EQ(j["layout"], "by-id");
  json report = report_json(trace("leaks"));
  std::size_t sites = j["sites"].size();
  ASSERT_EQ(sites, report["top_sites"]["calls"].size() + 0u);  // every site allocates
  std::vector<std::uint64_t> ids;
  for (const auto& s : j["sites"]) ids.push_back(s["site"]);
  EXPECT_EQ(j["top_sites"]["calls"].size(), sites);
  for (const auto& id : j["top_sites"]["calls"])
    EXPECT_NE(std::find(ids.begin(), ids.end(), id.get<std::uint64_t>()), ids.end());
  // The strdup leak: its site's frames, looked up by id, start at __strdup.
  for (const auto& ls : j["leaks"]["sites"]) {
    EXPECT_FALSE(ls.contains("stack"));
    if (ls["bytes"] != 21) continue;
    const json& site =
        j["sites"]
         [std::find(ids.begin(), ids.end(), ls["site"].get<std::uint64_t>()) - ids.begin()];
    EXPECT_EQ(j["frames"][site["frames"][0].get<std::size_t>()]["function"], "__strdup");
    EXPECT_EQ(j["frames"][site["frames"][1].get<std::size_t>()]["function"],
              "(anonymous namespace)::leak_strdup()");
  }
  // Each distinct frame once.
  std::set<std::string> distinct;
  for (const auto& f : j["frames"]) distinct.insert(f.dump());
  EXPECT_EQ(distinct.size(), j["frames"].size());

  auto top = memtrail("export --format json --top 2 " + trace("leaks"));
  ASSERT_EQ(top.exit_code, 0) << top.err;
  json t = json::parse(top.out);
  EXPECT_EQ(t["top_sites"]["calls"].size(), 2u);
  EXPECT_EQ(t["leaks"]["sites"].size(), 2u);
  std::set<std::uint64_t> named;
  for (const auto& [name, list] : t["top_sites"].items())
    for (const auto& id : list) named.insert(id.get<std::uint64_t>());
  for (const auto& ls : t["leaks"]["sites"]) named.insert(ls["site"].get<std::uint64_t>());
  EXPECT_EQ(t["sites"].size(), named.size());

  auto bad = memtrail("export --format folded --top 2 " + trace("leaks"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err_lines(), 1) << bad.err;
  EXPECT_NE(bad.err.find("--top applies to --format json and charts only"), std::string::npos)
      << bad.err;
}

}  // namespace
}  // namespace memtrail

namespace memtrail {
namespace {

// report --json streams its sites (write_report_json): byte for byte the
// document to_report_json builds and dump(2) writes, at every --top, with
// and without extra keys; and the CLI prints that.
std::string trace_file_in(const std::string& run_dir) {
  for (const auto& e : std::filesystem::directory_iterator(run_dir))
    if (e.path().extension() == ".mtr") return e.path().string();
  return {};
}

TEST_F(SampleReports, StreamedJsonIsTheDumpOfTheWholeDocument) {
  for (const char* name : {"leaks", "unrolled"}) {
    Analysis a = analyze(trace_file_in(dir_->file(name)));
    ASSERT_GT(a.sites.size(), 1u) << name;
    ASSERT_GE(a.leaks.sites.size(), 1u) << name;
    for (std::size_t top : {0, 1, 2, 100000}) {
      SCOPED_TRACE(std::string(name) + " --top " + std::to_string(top));
      std::ostringstream streamed;
      write_report_json(streamed, a, top);
      ASSERT_EQ(streamed.str(), to_report_json(a, top).dump(2));
      json extra = {{"filter", {{"function", "main"}, {"sites_kept", 1}}}};
      std::ostringstream with_extra;
      write_report_json(with_extra, a, top, extra);
      json whole = to_report_json(a, top);
      whole["filter"] = extra["filter"];
      ASSERT_EQ(with_extra.str(), whole.dump(2));
    }
    auto r = memtrail("report --json --top 3 " + trace(name));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, to_report_json(a, 3).dump(2) + "\n");
  }
}

}  // namespace
}  // namespace memtrail
