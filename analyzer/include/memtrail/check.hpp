// memtrail check: the CI gate. Turns an Analysis into pass/fail verdicts on
// limits (leaked bytes and blocks, peak used, peak reserved), leak
// suppressions (LeakSanitizer syntax) and a baseline, and renders them as
// text for people and JUnit XML for CI servers. `memtrail check` and the
// GoogleTest integration only present what is computed here.
//
//   memtrail::CheckConfig config;                 // or load_policy("memtrail.json", ...)
//   config.max_leaked_bytes = 0;
//   memtrail::SuppressionSet supp = memtrail::default_suppressions();
//   memtrail::Analysis a = memtrail::analyze("run.mtr", options);
//   memtrail::CheckResult r = memtrail::run_check(a, config, supp, baseline);
//   std::cout << memtrail::format_check_text(r, supp);
//   return r.passed() ? 0 : 1;
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memtrail/analysis.hpp"
#include "memtrail/leak_kinds.hpp"
#include "memtrail/tally.hpp"

namespace memtrail {

// ---------------------------------------------------------------- suppressions

// One suppression rule. Its type says what its pattern is matched against,
// in every frame of a leak site's stack; the site is suppressed when any
// frame matches:
//   leak:PATTERN  the function, source file or module (LeakSanitizer's rule)
//   fun:PATTERN   the function only (a C/C++ function or a Python function's
//                 qualified name)
//   src:PATTERN   the source file only (a .c/.cpp file, or a .py file of a
//                 Python frame: `src:train.py`)
// (`fun:` and `src:` are the sanitizers' special-case-list names.) As in
// LeakSanitizer, a pattern matches anywhere inside the text, `*` matches any
// run of characters, a leading `^` anchors it at the start and a trailing `$`
// at the end.
enum class SuppressionType : std::uint8_t { leak, fun, src };

struct Suppression {
  std::string pattern;
  std::string origin;  // "FILE:LINE", "policy" or "default"
  // Filled by run_check(): what this rule suppressed (first matching rule wins).
  std::uint64_t sites = 0;
  Tally suppressed{};
  SuppressionType type = SuppressionType::leak;

  // The rule as written: "leak:PATTERN", "fun:PATTERN" or "src:PATTERN".
  std::string text() const;
};

struct SuppressionSet {
  std::vector<Suppression> rules;
  // The first rule matching any frame, or -1.
  int match(const FrameList& frames) const;
};

bool wildcard_match(std::string_view pattern, std::string_view text);

// Parses suppression text: one `leak:PATTERN`, `fun:PATTERN` or
// `src:PATTERN` per line, `#` comments and blank lines ignored. Other types
// (`race:`, `obj:`...) and empty patterns are errors ("FILE:3: unknown
// suppression type 'race'").
bool parse_suppressions(std::string_view text, const std::string& origin, SuppressionSet& out,
                        std::string* error);
bool load_suppressions(const std::string& path, SuppressionSet& out, std::string* error);

// The C and C++ runtimes' one-time allocations (docs/ci.md lists them with
// the reason for each). Origin "default".
const std::vector<std::string>& default_suppression_patterns();
void add_default_suppressions(SuppressionSet& out);

// ---------------------------------------------------------------- configuration

struct CheckConfig {
  std::optional<std::uint64_t> max_leaked_bytes;  // leaked (direct + indirect) < or = this
  std::optional<std::uint64_t> max_leaked_blocks;
  std::optional<std::uint64_t> max_peak_bytes;      // process-wide peak used, or per --pool
  std::optional<std::uint64_t> max_reserved_bytes;  // each pool's peak reserved
  std::vector<std::string> pools;                   // empty = all pools
  std::vector<std::string> suppression_files;
  std::vector<std::string> suppressions;  // inline `leak:...` lines (policy)
  bool default_suppressions = true;
  std::string baseline;              // path; empty = none
  double tolerance_percent = 0;      // on baseline peaks
  std::size_t top_sites = 5;         // offending sites shown per failure
  std::size_t frames_per_site = 12;  // --num-callers
  // Growth per iteration of any scope (recorded, or of --iteration-mark),
  // rounded to bytes: a loop whose live bytes grow by more fails.
  std::optional<std::uint64_t> max_scope_growth;
  LeakKinds leak_kinds = kLeakedKinds;  // classes that count as leaks (--show-leak-kinds)
  // A trace short of some of the program's events (the recorder said it lost
  // them, or the trace was cut) fails the "lost-events" item unless accepted
  // (--accept-lost-events): its leaks and peaks may be wrong.
  bool accept_lost_events = false;
};

// Reads a policy file (JSON object). Keys: max_leaked, max_leaked_blocks,
// max_peak, max_reserved (sizes as strings or numbers), pools,
// suppressions (array of `leak:` lines), suppression_files, baseline
// (paths relative to the policy file), tolerance (percent),
// default_suppressions (bool), accept_lost_events (bool), top (int). An unknown key or a wrong type
// is an error naming it.
bool load_policy(const std::string& path, CheckConfig& out, std::string* error);

// The rules `config` asks for, in order: suppression files, inline policy
// lines, then the built-in defaults (unless turned off).
bool build_suppressions(const CheckConfig& config, SuppressionSet& out, std::string* error);

// ---------------------------------------------------------------- baseline

// Per-site leaks (keyed by the symbolized stack, never by ids or addresses,
// so a baseline survives ASLR and rebuilds that move no code) and per-pool
// peaks. Schema "memtrail.baseline/1".
struct BaselineSite {
  std::string key;
  Tally leaked{};
};
struct BaselinePool {
  std::string name;
  std::uint64_t peak_used_bytes = 0, peak_reserved_bytes = 0;
};
struct Baseline {
  std::vector<BaselineSite> leaks;
  std::vector<BaselinePool> pools;
  std::uint64_t peak_used_bytes = 0;  // process-wide (of the checked pools)
};

// "function at file:line <- caller at file:line <- ..." (module+0xoffset
// where nothing better is known; at most `max_frames` frames).
std::string site_key(const FrameList& frames, std::size_t max_frames = 64);

// The unsuppressed leak sites and pool peaks of `a`.
Baseline make_baseline(const Analysis& a, const SuppressionSet& suppressions);
// Its JSON: baseline_to_json (report_json.hpp).
bool load_baseline(const std::string& path, Baseline& out, std::string* error);

// ---------------------------------------------------------------- verdicts

// One limit checked: one JUnit testcase.
struct CheckItem {
  std::string name;  // "leaked-bytes", "peak-used", "reserved[cuda:0]", "baseline-leak-sites"...
  bool passed = true;
  std::string summary;  // "leaked 6.6 KiB (6885 bytes) in 13 blocks; limit 1 KiB"
  std::string details;  // offending sites with stacks, multi-line; empty if passed
};

struct CheckResult {
  std::vector<CheckItem> items;
  Tally leaked{};  // after suppressions
  Tally suppressed{};
  std::uint64_t peak_used_bytes = 0;
  bool passed() const;
  std::size_t failures() const;
};

// Evaluates every configured limit on `a` (which must be usable). Updates the
// per-rule counters of `suppressions`. `baseline` may be null.
CheckResult run_check(const Analysis& a, const CheckConfig& config, SuppressionSet& suppressions,
                      const Baseline* baseline);

// The "scope-growth" item of run_check (check_scope_growth.cpp).
CheckItem check_scope_growth(const Analysis& a, std::uint64_t limit, std::size_t frames_per_site);

// The "lost-events" item of run_check (check_lost_events.cpp): present only
// when the trace is short of events (lost marks, or no end-of-trace marker);
// it fails unless `accept`. One line: how many and why.
std::optional<CheckItem> check_lost_events(const Analysis& a, bool accept);

// Human text: one line per limit (PASS/FAIL), failure details, then the
// "Suppressions used:" table of the rules that matched.
std::string format_check_text(const CheckResult& r, const SuppressionSet& suppressions);

// <testsuites><testsuite name=...><testcase/>... with tests/failures counts;
// a failed item becomes <failure message="summary">details</failure>.
std::string to_junit_xml(const CheckResult& r, const std::string& suite_name, double seconds = 0);

}  // namespace memtrail
