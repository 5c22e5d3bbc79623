// The C API and the Python module end to end: programs that mark loop
// iterations, scopes and pauses run under `memtrail run`, and `memtrail
// check` / `report` read the loops back; the same programs run untraced do
// nothing different.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_command.hpp"
#include "run_dir.hpp"
#include "temp_dir.hpp"

namespace {

using memtrail::test::CommandResult;
using memtrail::test::contains;
using memtrail::test::only_trace;
using memtrail::test::run_command;
using memtrail::test::shell_quote;
using memtrail::test::TempDir;

constexpr const char* kPython = "/usr/bin/python3";

std::string script(const std::string& name) {
  return shell_quote(std::string(PYTHON_TESTS_DIR) + "/" + name);
}

// Runs `command` under `memtrail run` into dir/run; returns the trace path.
// `environment`: assignments for memtrail run itself ("A=1 ").
std::string traced(const TempDir& dir, const std::string& command, CommandResult* program = nullptr,
                   const std::string& environment = "") {
  CommandResult r = run_command(environment + MEMTRAIL_BIN + " run -q -o " +
                                shell_quote(dir / "run") + " -- " + command);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (program) *program = r;
  return only_trace(dir / "run");
}

// check's verdict; its text (stdout and stderr) in `out`.
CommandResult check_step(const std::string& trace) {
  return memtrail::test::run_merged(
      std::string(MEMTRAIL_BIN) +
      " check --iteration-mark step --max-scope-growth 0 --max-leaked 1GiB " + shell_quote(trace));
}

bool have_python() {
  return access(kPython, X_OK) == 0;
}

TEST(PythonModule, LeakyLoopFailsTheIterationCheck) {
  if (!have_python()) GTEST_SKIP() << kPython << " is not installed";
  TempDir dir("python-leaky");
  std::string trace = traced(dir, std::string(kPython) + " " + script("leaky_loop.py"));
  ASSERT_FALSE(trace.empty());
  CommandResult r = check_step(trace);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "scope 'step' grows")) << r.out;
  // The kept bytearray (4096 bytes and its NUL) grows at the line that
  // makes it, named between the native frames (CPython 3.11).
  EXPECT_TRUE(contains(r.out, "+4097 bytes per iteration")) << r.out;
  EXPECT_TRUE(contains(r.out, "one_step at " + std::string(PYTHON_TESTS_DIR) + "/leaky_loop.py:14"))
      << r.out;
}

TEST(PythonModule, FixedLoopPassesTheIterationCheck) {
  if (!have_python()) GTEST_SKIP() << kPython << " is not installed";
  TempDir dir("python-fixed");
  std::string trace = traced(dir, std::string(kPython) + " " + script("leaky_loop.py") + " fixed");
  ASSERT_FALSE(trace.empty());
  CommandResult r = check_step(trace);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST(PythonModule, EveryCallReachesTheTrace) {
  if (!have_python()) GTEST_SKIP() << kPython << " is not installed";
  TempDir dir("python-tour");
  CommandResult program;
  std::string trace = traced(dir, std::string(kPython) + " " + script("api_tour.py"), &program);
  ASSERT_FALSE(trace.empty());
  EXPECT_EQ(program.out, "tracing\n");
  // The decorated function's loop is found without --iteration-mark.
  CommandResult r = run_command(std::string(MEMTRAIL_BIN) + " report --json " + shell_quote(trace));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  bool epoch = false, batch = false;
  for (const auto& sc : j["scopes"]) {
    if (sc["name"] == "epoch") epoch = sc["entries"] == 1;
    if (sc["name"] == "batch") batch = sc["entries"] == 4;
  }
  EXPECT_TRUE(epoch) << j["scopes"].dump();
  EXPECT_TRUE(batch) << j["scopes"].dump();
  // The 1 MiB bytearray made while paused is not in the trace.
  CommandResult dump = run_command(std::string(MEMTRAIL_BIN) + " dump " + shell_quote(trace));
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_FALSE(contains(dump.out, "1048577")) << "the paused allocation was recorded";
  EXPECT_TRUE(contains(dump.out, "pause")) << "no pause mark";
}

TEST(PythonModule, DoesNothingOutsideMemtrailRun) {
  if (!have_python()) GTEST_SKIP() << kPython << " is not installed";
  CommandResult r = run_command("env PYTHONPATH=" + shell_quote(PYTHON_MODULE_DIR) + " " + kPython +
                                " " + script("api_tour.py"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "not tracing\n");
  EXPECT_EQ(r.err, "");
  // Untraced, a marked loop makes nothing per iteration (docs/BENCHMARKS.md):
  // one shared do-nothing object, and a decorator that returns the function.
  r = run_command("env PYTHONPATH=" + shell_quote(PYTHON_MODULE_DIR) + " " + kPython +
                  " -c 'import memtrail; f = lambda: 0; "
                  "assert memtrail.iteration(\"step\")(f) is f; "
                  "assert memtrail.scope(\"a\") is memtrail.iteration(\"b\") is memtrail.paused(); "
                  "print(\"ok\")'");
  EXPECT_EQ(r.out, "ok\n") << r.err;
}

TEST(PythonModule, RunAppendsItsDirectoryToTheUsersPythonPath) {
  if (!have_python()) GTEST_SKIP() << kPython << " is not installed";
  TempDir dir("python-path");
  CommandResult program;
  traced(dir, std::string(kPython) + " -c 'import os, memtrail; print(os.environ[\"PYTHONPATH\"])'",
         &program, "PYTHONPATH=/nonexistent/first ");
  EXPECT_EQ(program.out, "/nonexistent/first:" + std::string(PYTHON_MODULE_DIR) + "\n");
}

// Python frames (CPython 3.11) between the native ones, in report, check
// and the folded export.
TEST(PythonFrames, ReportCheckAndFoldedShowPythonLines) {
  if (!have_python()) GTEST_SKIP() << kPython << " is not installed";
  TempDir dir("python-frames");
  std::string trace = traced(dir, std::string(kPython) + " " + script("frames.py"));
  ASSERT_FALSE(trace.empty());
  const std::string file = std::string(PYTHON_TESTS_DIR) + "/frames.py";
  CommandResult report = run_command(std::string(MEMTRAIL_BIN) + " report " + shell_quote(trace));
  ASSERT_EQ(report.exit_code, 0) << report.err;
  // The loop leads the report, its growing site two Python calls deep.
  auto loops = report.out.find("LOOPS"), leaks = report.out.find("\nLEAKS");
  ASSERT_NE(loops, std::string::npos) << report.out;
  EXPECT_LT(loops, leaks);
  EXPECT_TRUE(contains(report.out, "loop 'step': 20 iterations, grows 5001 bytes per iteration"))
      << report.out;
  auto grow = report.out.find("grow_one at " + file + ":20");
  auto module = report.out.find("<module> at " + file + ":26");
  auto eval = report.out.find("_PyEval_EvalFrameDefault", grow);
  ASSERT_NE(grow, std::string::npos) << report.out;
  EXPECT_LT(grow, module);  // innermost first
  EXPECT_LT(module, eval);  // the interpreter call that ran them comes after
  CommandResult check = memtrail::test::run_merged(
      std::string(MEMTRAIL_BIN) + " check --max-scope-growth 0 --max-leaked 1GiB " +
      shell_quote(trace));
  EXPECT_EQ(check.exit_code, 1) << check.out;
  EXPECT_TRUE(contains(check.out, "grow_one at " + file + ":20")) << check.out;
  // Folded stacks, outermost first: <module> then outer then make_buffer.
  CommandResult folded =
      run_command(std::string(MEMTRAIL_BIN) + " export --format folded " + shell_quote(trace));
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  bool nested = false;
  for (const std::string& line : folded.out_lines()) {
    auto m = line.find("frames.py:23"), o = line.find("frames.py:13"),
         b = line.find("frames.py:9;");
    nested |= m != std::string::npos && o != std::string::npos && b != std::string::npos && m < o &&
              o < b;
  }
  EXPECT_TRUE(nested) << folded.out.substr(0, 4000);
}

// The other exports carry the Python frames too: the JSON export's stacks,
// pprof's functions (gzip'ed protobuf: the strings are readable once
// inflated) and the SQLite export's frames table.
TEST(PythonFrames, JsonPprofAndSqliteExportsNamePythonLines) {
  if (!have_python()) GTEST_SKIP() << kPython << " is not installed";
  TempDir dir("python-exports");
  std::string trace = traced(dir, std::string(kPython) + " " + script("frames.py"));
  ASSERT_FALSE(trace.empty());
  const std::string file = std::string(PYTHON_TESTS_DIR) + "/frames.py";
  auto exported = [&](const std::string& format) {
    std::string out = dir / ("out." + format);
    CommandResult r = run_command(std::string(MEMTRAIL_BIN) + " export --no-symbols --format " +
                                  format + " -o " + shell_quote(out) + " " + shell_quote(trace));
    EXPECT_EQ(r.exit_code, 0) << format << ": " << r.err;
    return out;
  };
  CommandResult json = run_command("cat " + shell_quote(exported("json")));
  EXPECT_TRUE(contains(json.out, "\"file\":\"" + file + "\",\"function\":\"grow_one\"")) << "json";
  CommandResult pprof = run_command("gzip -dc " + shell_quote(exported("pprof")));
  EXPECT_TRUE(contains(pprof.out, "grow_one") && contains(pprof.out, file)) << "pprof";
  if (run_command("command -v sqlite3").exit_code != 0) return;  // the CLI reads the file
  CommandResult sql = run_command("sqlite3 " + shell_quote(exported("sqlite")) +
                                  " \"select function || ' at ' || file || ':' || line from frames "
                                  "where module = 'python'\"");
  EXPECT_TRUE(contains(sql.out, "grow_one at " + file + ":20")) << sql.out.substr(0, 2000);
}

// CPython unmaps frame-stack chunks on deep returns while its current frame
// still points into them: the recorder reads no frame chain for a munmap.
// A smoke test only: it passed without that rule too (the unmapped chunk
// was not read here); the PyTorch samples are the ones that crashed.
TEST(PythonFrames, DeepRecursionRunsUnderTheTracer) {
  if (!have_python()) GTEST_SKIP() << kPython << " is not installed";
  TempDir dir("python-deep");
  CommandResult program;
  std::string trace =
      traced(dir, std::string(kPython) + " " + script("deep_recursion.py"), &program);
  EXPECT_EQ(program.out, "ok\n");
  EXPECT_FALSE(trace.empty());
}

// One Python line whose way through the interpreter's nameless internals
// differs between two runs (marshal.loads recursing 3 and 6 levels deep
// before it allocates): `diff` matches it as one site, unchanged, with
// symbols and without. It was two sites, "calls 10 -> 0" and "0 -> 10",
// keyed by the offsets and the number of python3.11+0x... frames.
TEST(PythonFrames, DiffMatchesOneLineWhateverInterpreterInternalsItRanThrough) {
  if (!have_python()) GTEST_SKIP() << kPython << " is not installed";
  TempDir dir("python-diff-3"), deeper("python-diff-6");
  std::string a = traced(dir, std::string(kPython) + " " + script("nested_load.py") + " 3");
  std::string b = traced(deeper, std::string(kPython) + " " + script("nested_load.py") + " 6");
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  const std::string line = "load at " + std::string(PYTHON_TESTS_DIR) + "/nested_load.py:19";
  CommandResult report =
      run_command(std::string(MEMTRAIL_BIN) + " report --num-callers 64 " + shell_quote(b));
  ASSERT_TRUE(contains(report.out, line)) << report.out;  // the line allocates
  for (const std::string flags : {"--no-symbols ", ""}) {
    CommandResult diff = run_command(std::string(MEMTRAIL_BIN) + " diff --num-callers 64 " + flags +
                                     shell_quote(a) + " " + shell_quote(b));
    ASSERT_EQ(diff.exit_code, 0) << diff.err;
    EXPECT_FALSE(contains(diff.out, line)) << flags << "\n" << diff.out.substr(0, 6000);
  }
}

// The calls of each site (report --json, every site) whose innermost frame
// is `function` and whose stack names `python_frame`.
std::vector<std::uint64_t> site_calls(const std::string& trace, const std::string& flags,
                                      const std::string& function,
                                      const std::string& python_frame) {
  CommandResult r = run_command(std::string(MEMTRAIL_BIN) + " report --json --top 0 " + flags +
                                shell_quote(trace));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::uint64_t> calls;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  if (j.is_discarded()) return calls;
  for (const auto& site : j["top_sites"]["calls"]) {
    // A top site names its frames by index into the document's table.
    nlohmann::json stack = nlohmann::json::array();
    for (const auto& id : site["frames"]) stack.push_back(j["frames"].at(id.get<std::size_t>()));
    if (stack.empty() || stack[0]["function"] != function) continue;
    for (const auto& f : stack)
      if (f["module"] == "python" && f["function"].get<std::string>() + " at " +
                                             f["file"].get<std::string>() + ":" +
                                             std::to_string(f["line"].get<int>()) ==
                                         python_frame)
        calls.push_back(site["calls"]);
  }
  return calls;
}

// Site grouping with Python frames: one line that the specializing
// interpreter reaches from two places of _PyEval_EvalFrameDefault (generic
// BINARY_OP first, BINARY_OP_ADD_UNICODE once specialized) is two recorded
// stacks and one site: the frames a reader sees are the same.
TEST(PythonFrames, ReportGroupsALineReachedThroughTwoInterpreterAddresses) {
  if (!have_python()) GTEST_SKIP() << kPython << " is not installed";
  TempDir dir("python-group");
  std::string trace = traced(dir, std::string(kPython) + " " + script("specialized_concat.py"));
  ASSERT_FALSE(trace.empty());
  const std::string line = "join at " + std::string(PYTHON_TESTS_DIR) + "/specialized_concat.py:12";
  auto by_address = site_calls(trace, "--group-by-address ", "PyUnicode_Concat", line);
  ASSERT_GE(by_address.size(), 2u) << "one recorded stack only: the test shows nothing";
  EXPECT_EQ(site_calls(trace, "", "PyUnicode_Concat", line), std::vector<std::uint64_t>{200});
}

// Suppression rules name Python functions and .py files (`fun:`, `src:`,
// and `leak:` that matches either): native_leak.py leaks 123,457 bytes of
// libc malloc through ctypes at keep_native (line 14).
TEST(PythonFrames, SuppressionsNamePythonFunctionsAndFiles) {
  if (!have_python()) GTEST_SKIP() << kPython << " is not installed";
  TempDir dir("python-supp");
  std::string trace = traced(dir, std::string(kPython) + " " + script("native_leak.py"));
  ASSERT_FALSE(trace.empty());
  auto check = [&](const std::string& rule) {
    std::string file = dir / "rules.supp";
    FILE* out = std::fopen(file.c_str(), "w");
    std::fputs((rule + "\n").c_str(), out);
    std::fclose(out);
    return memtrail::test::run_merged(
        std::string(MEMTRAIL_BIN) + " check --max-leaked 0 " +
        (rule.empty() ? "" : "--suppressions " + shell_quote(file) + " ") + shell_quote(trace));
  };
  CommandResult bare = check("");
  EXPECT_EQ(bare.exit_code, 1) << bare.out;
  EXPECT_TRUE(
      contains(bare.out, "keep_native at " + std::string(PYTHON_TESTS_DIR) + "/native_leak.py:14"))
      << bare.out;
  for (const std::string rule :
       {"src:native_leak.py", "fun:^keep_native$", "leak:native_leak.py", "fun:outer"}) {
    CommandResult r = check(rule);
    EXPECT_EQ(r.exit_code, 0) << rule << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, "123457 " + rule + " (")) << r.out;  // Suppressions used
  }
  // Each type looks at its own field: no function is named native_leak.py,
  // no file keep_native.
  for (const std::string rule : {"fun:native_leak.py", "src:keep_native", "src:other.py"}) {
    CommandResult r = check(rule);
    EXPECT_EQ(r.exit_code, 1) << rule << "\n" << r.out;
  }
}

// samples/pytorch under memtrail run (skipped without python3-torch). Native
// frames stay unresolved (--no-symbols): resolving libtorch takes minutes,
// and the Python frames the tests read need no DWARF.
bool have_torch() {
  return have_python() && run_command(std::string(kPython) + " -c 'import torch'").exit_code == 0;
}

std::string sample(const std::string& name) {
  return shell_quote(std::string(PYTORCH_SAMPLES_DIR) + "/" + name);
}

CommandResult check_sample(const std::string& trace) {
  return memtrail::test::run_merged(
      std::string(MEMTRAIL_BIN) +
      " check --no-symbols --num-callers 48 --iteration-mark step --max-scope-growth 0 "
      "--max-leaked 1GiB " +
      shell_quote(trace));
}

TEST(PyTorchSamples, LeakyTrainingLoopNamesTheLinesThatKeepMemory) {
  if (!have_torch()) GTEST_SKIP() << "python3-torch is not installed";
  TempDir dir("pytorch-leak");
  std::string trace = traced(dir, std::string(kPython) + " " + sample("train.py") + " leak");
  ASSERT_FALSE(trace.empty());
  CommandResult r = check_sample(trace);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const std::string file = std::string(PYTORCH_SAMPLES_DIR) + "/train.py:";
  // The kept features: relu's 64x64 float output, made at line 36 and kept
  // by line 41; and the loss graph chained by `total_loss += loss`.
  auto features = r.out.find("+16384 bytes per iteration");
  ASSERT_NE(features, std::string::npos) << r.out;
  auto next_site = r.out.find("bytes per iteration, allocated from", features + 30);
  EXPECT_NE(r.out.substr(features, next_site - features).find("train_step at " + file + "36"),
            std::string::npos)
      << r.out;
  EXPECT_TRUE(contains(r.out, "train_step at " + file + "42")) << r.out;
}

// Frames of the site blocks of `report`'s or `diff`'s text: a line that
// `is_heading` starts one, its indented frames follow.
template <typename Heading>
std::vector<std::vector<std::string>> site_blocks(const std::string& text, Heading is_heading) {
  std::vector<std::vector<std::string>> sites;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (is_heading(line))
      sites.emplace_back(1, line);
    else if (!sites.empty() && line.rfind("    ", 0) == 0)
      sites.back().push_back(line);
  }
  return sites;
}

std::vector<std::vector<std::string>> site_frames(const std::string& report) {
  return site_blocks(report, [](const std::string& line) {
    return contains(line, "bytes per iteration from") || contains(line, "leak:");
  });
}

// The leaky loop as its author reads it, with symbols: a growing site's
// frames go from ATen's C++ (at::) up through train_step's line in
// train.py, in `report` and in the folded export (outermost first there).
TEST(PyTorchSamples, LeakyLoopInterleavesTrainPyLinesWithAtFrames) {
  if (!have_torch()) GTEST_SKIP() << "python3-torch is not installed";
  TempDir dir("pytorch-frames");
  std::string trace = traced(dir, std::string(kPython) + " " + sample("train.py") + " leak");
  ASSERT_FALSE(trace.empty());
  const std::string train = std::string(PYTORCH_SAMPLES_DIR) + "/train.py:";
  CommandResult report =
      run_command(std::string(MEMTRAIL_BIN) + " report --num-callers 64 " + shell_quote(trace));
  ASSERT_EQ(report.exit_code, 0) << report.err;
  bool interleaved = false;
  for (const auto& frames : site_frames(report.out)) {
    std::size_t aten = frames.size(), python = frames.size();
    for (std::size_t i = 0; i < frames.size(); ++i) {
      if (aten == frames.size() && contains(frames[i], " at::")) aten = i;
      if (python == frames.size() && contains(frames[i], "train_step at " + train)) python = i;
    }
    interleaved |= aten < python && python < frames.size();
  }
  EXPECT_TRUE(interleaved) << report.out.substr(0, 6000);
  CommandResult folded =
      run_command(std::string(MEMTRAIL_BIN) + " export --format folded " + shell_quote(trace));
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  bool nested = false;
  for (const std::string& line : folded.out_lines()) {
    auto python = line.find("train_step at " + train), aten = line.find(";at::", python);
    nested |= python != std::string::npos && aten != std::string::npos;
  }
  EXPECT_TRUE(nested) << folded.out.substr(0, 4000);
}

// `diff` of the fixed and the leaky loop matches sites by their symbolized
// stacks, Python frames included (by function, file and line): the
// features relu makes at train.py:36 in the marked loop (called from line
// 54) are one site in both runs (40 calls each, one per step), grown in the
// leaky one; the 3 warm-up steps (called from line 51) are a site of their
// own; the loss graph kept by `+=` at line 42 is the leaky run's alone.
TEST(PyTorchSamples, DiffOfFixedAndLeakyLoopsGroupsSitesByPythonLines) {
  if (!have_torch()) GTEST_SKIP() << "python3-torch is not installed";
  TempDir dir("pytorch-diff");
  std::string leaky = traced(dir, std::string(kPython) + " " + sample("train.py") + " leak");
  TempDir fixed_dir("pytorch-diff-fixed");
  std::string fixed = traced(fixed_dir, std::string(kPython) + " " + sample("train.py") + " fixed");
  ASSERT_FALSE(leaky.empty());
  ASSERT_FALSE(fixed.empty());
  CommandResult diff = run_command(std::string(MEMTRAIL_BIN) + " diff --num-callers 64 " +
                                   shell_quote(fixed) + " " + shell_quote(leaky));
  ASSERT_EQ(diff.exit_code, 0) << diff.err;
  const std::string train = "train_step at " + std::string(PYTORCH_SAMPLES_DIR) + "/train.py:";
  bool kept_features = false, kept_loss = false;
  auto sites = site_blocks(diff.out,
                           [](const std::string& line) { return line.rfind("  leaked ", 0) == 0; });
  for (const auto& site : sites) {
    auto names = [&site](const std::string& text) {
      return std::any_of(site.begin() + 1, site.end(),
                         [&](const std::string& f) { return contains(f, text); });
    };
    kept_features |= contains(site[0], "peak +") && contains(site[0], "calls 40 -> 40") &&
                     names(train + "36") &&
                     names("<module> at " + std::string(PYTORCH_SAMPLES_DIR) + "/train.py:54");
    kept_loss |= contains(site[0], "calls 0 -> ") && names(train + "42");
  }
  EXPECT_TRUE(kept_features) << diff.out.substr(0, 8000);
  EXPECT_TRUE(kept_loss) << diff.out.substr(0, 8000);
}

TEST(PyTorchSamples, FixedTrainingLoopPasses) {
  if (!have_torch()) GTEST_SKIP() << "python3-torch is not installed";
  TempDir dir("pytorch-fixed");
  std::string trace = traced(dir, std::string(kPython) + " " + sample("train.py") + " fixed");
  ASSERT_FALSE(trace.empty());
  CommandResult r = check_sample(trace);
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

TEST(PyTorchSamples, InferenceLoopGrowsByWhatItKeeps) {
  if (!have_torch()) GTEST_SKIP() << "python3-torch is not installed";
  TempDir dir("pytorch-infer");
  std::string trace = traced(dir, std::string(kPython) + " " + sample("infer.py"));
  ASSERT_FALSE(trace.empty());
  CommandResult r = check_sample(trace);
  // One 64x1 float32 tensor per step: its 256 data bytes (c10::alloc_cpu),
  // and PyTorch 1.13's native objects of a CPU tensor: TensorImpl (192),
  // StorageImpl (80), its version counter (32). The list is preallocated.
  EXPECT_TRUE(contains(r.out, "scope 'step' grows 560 bytes per iteration over 40 entries"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "+256 bytes per iteration")) << r.out;
  EXPECT_TRUE(contains(r.out, "infer.py:22")) << r.out;
}

TEST(CApi, LeakyCLoopFailsAndTheFixedOnePasses) {
  TempDir dir("c-api");
  std::string leaky = traced(dir, std::string(C_API_LOOP_BIN) + " leak");
  ASSERT_FALSE(leaky.empty());
  CommandResult r = check_step(leaky);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "scope 'step' grows 256 bytes per iteration over 40 entries"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "c_api_loop.c:")) << r.out;

  TempDir fixed_dir("c-api-fixed");
  std::string fixed = traced(fixed_dir, C_API_LOOP_BIN);
  ASSERT_FALSE(fixed.empty());
  r = check_step(fixed);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // The scope by name, and the paused 777-byte block kept out of the trace.
  r = run_command(std::string(MEMTRAIL_BIN) + " report --json " + shell_quote(fixed));
  auto j = nlohmann::json::parse(r.out);
  bool setup = false;
  for (const auto& sc : j["scopes"]) setup |= sc["name"] == "setup" && sc["bytes_escaped"] == 1000;
  EXPECT_TRUE(setup) << j["scopes"].dump();
  CommandResult dump = run_command(std::string(MEMTRAIL_BIN) + " dump " + shell_quote(fixed));
  // An allocation's line reads "size=777 requested=777"; "777" alone can be
  // part of a time or an address.
  EXPECT_FALSE(contains(dump.out, "size=777 requested=777"))
      << "the paused allocation was recorded";
}

TEST(CApi, UntracedProgramsRunAsWithoutMemtrail) {
  CommandResult r = run_command(C_API_LOOP_BIN);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "not tracing\n");
  r = run_command(C_API_LINKED_BIN);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "api 1, not tracing\n");
  EXPECT_EQ(r.err, "");
}

TEST(CApi, LinkedProgramReachesTheRecorderUnderRun) {
  TempDir dir("c-api-linked");
  CommandResult program;
  std::string trace = traced(dir, C_API_LINKED_BIN, &program);
  ASSERT_FALSE(trace.empty());
  EXPECT_EQ(program.out, "api 1, tracing\n");
  CommandResult r = check_step(trace);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "10 entries") || contains(r.out, "scope")) << r.out;
}

TEST(CxxApi, IterationScopeAndPausedReachTheTrace) {
  TempDir dir("cxx-api");
  CommandResult program;
  std::string trace = traced(dir, CXX_API_LOOP_BIN, &program);
  ASSERT_FALSE(trace.empty());
  EXPECT_EQ(program.out, "tracing\n");
  CommandResult r = check_step(trace);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(contains(r.out, "scope 'step' grows 128 bytes per iteration over 30 entries"))
      << r.out;
  CommandResult dump = run_command(std::string(MEMTRAIL_BIN) + " dump " + shell_quote(trace));
  EXPECT_FALSE(contains(dump.out, "size=999 ")) << "the paused allocation was recorded";
  EXPECT_TRUE(contains(dump.out, "kind=pause")) << "no pause mark";
  r = run_command(CXX_API_LOOP_BIN);  // untraced: runs as without memtrail
  EXPECT_EQ(r.out, "not tracing\n");
}

}  // namespace
