// The stack cache (tracer/src/stack_cache.hpp) with Python frames spliced in
// (python_frames.hpp): an embedded CPython 3.11 loop calls, through ctypes,
// a function of this program that records one event. Two lines of the loop
// make the calls, so consecutive events have the same native chain (CPython
// runs both lines in one _PyEval_EvalFrameDefault call) and different Python
// frames. The cache must serve the native chain (it once never learnt a chain
// whose stack had Python frames: every such event unwound) and every event
// must still name its own line.
#include <Python.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>

#include "memtrail/detail/test_counters.hpp"
#include "memtrail/event.hpp"
#include "memtrail/recorder.hpp"
#include "trace_collector.hpp"

namespace {

constexpr std::uintptr_t kAddressBase = 0x10000000;
constexpr int kEvents = 4000;
std::uint32_t g_pool = 0;

// The loop: even events from line 5, odd ones from line 6.
constexpr const char* kLoop =
    "import ctypes\n"
    "record = ctypes.CDLL(None).memtrail_python_cache_record\n"
    "record.argtypes = [ctypes.c_int]\n"
    "for i in range(0, N, 2):\n"
    "    record(i)\n"
    "    record(i + 1)\n";

}  // namespace

extern "C" __attribute__((visibility("default"), noinline)) void memtrail_python_cache_record(
    int n) {
  memtrail::record_alloc(g_pool, reinterpret_cast<const void*>(kAddressBase + n), 64, 64);
}

namespace {

// The line of the innermost Python frame of each event, by event number.
std::map<int, std::string> python_lines(const memtrail::test::Collected& c) {
  std::map<std::uint32_t, std::string> strings(c.strings.begin(), c.strings.end());
  std::map<std::uint32_t, memtrail::StackNode> nodes;
  for (const auto& n : c.stack_nodes) nodes[n.id] = n;
  std::map<int, std::string> lines;
  for (const memtrail::Event& e : c.events) {
    if (e.kind != memtrail::EventKind::alloc || e.address < kAddressBase) continue;
    int n = static_cast<int>(e.address - kAddressBase);
    lines[n] = "(no Python frame)";
    for (std::uint32_t id = e.stack; id != 0; id = nodes.at(id).parent)
      if (memtrail::is_python_frame(nodes.at(id).ip)) {
        const std::string& text = strings[memtrail::python_frame_string(nodes.at(id).ip)];
        lines[n] = text.substr(text.rfind('\x1f') + 1);
        break;
      }
  }
  return lines;
}

TEST(PythonStackCache, NativeChainIsCachedAndEachEventKeepsItsPythonLine) {
  Py_InitializeEx(0);
  memtrail::test::TempFile trace("python-stack-cache.mtr");
  memtrail::RecorderOptions o;
  o.output = trace.path;
  o.sample_interval_ms = 0;
  o.stack_depth = 64;
  o.stack_cache = true;
  ASSERT_TRUE(memtrail::start(o));
  g_pool = memtrail::register_pool(
      {0, 0, "python-cache", memtrail::PoolKind::other, memtrail::MemorySpace::host, -1});
  PyObject* globals = PyDict_New();
  PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
  PyObject* n = PyLong_FromLong(kEvents);
  PyDict_SetItemString(globals, "N", n);
  PyObject* result = PyRun_String(kLoop, Py_file_input, globals, globals);
  if (!result) PyErr_Print();
  ASSERT_NE(result, nullptr);
  memtrail::detail::StackCacheCounts counts = memtrail::detail::stack_cache_counts();
  memtrail::stop();
  Py_DECREF(result);
  Py_DECREF(n);
  Py_DECREF(globals);

  // Nearly all hits once learnt (a chain is learnt at its second sighting).
  EXPECT_GE(counts.hits, static_cast<std::uint64_t>(kEvents * 9 / 10))
      << "hits " << counts.hits << " misses " << counts.misses;
  memtrail::test::Collected c;
  memtrail::ReadResult r = memtrail::test::read_trace(trace.path, c);
  ASSERT_TRUE(r.ok) << r.error;
  std::map<int, std::string> lines = python_lines(c);
  ASSERT_EQ(lines.size(), static_cast<std::size_t>(kEvents));
  int wrong = 0;
  for (const auto& [event, line] : lines)
    if (line != (event % 2 ? "6" : "5") && ++wrong <= 3)
      ADD_FAILURE() << "event " << event << " names line " << line;
  EXPECT_EQ(wrong, 0);
}

}  // namespace
