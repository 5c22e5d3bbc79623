// SymbolTable (analyzer/src/symbol_table.hpp) against libdwfl's own
// dwfl_module_addrinfo, address by address, on system libraries and on a
// stripped library with thousands of exported functions and no debug info
// (the shape of libtorch_cpu), where the table is also much faster (a speed
// for benchmarks, not asserted here).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "memtrail/analysis.hpp"
#include "offline_module.hpp"
#include "symbol_table.hpp"

namespace memtrail {
namespace {

using test::kBase;
using test::OpenModule;

std::string show(const char* s) {
  return s ? s : "(null)";
}

// Around every symbol's start and end, and at a stride over the whole
// module: the table names what dwfl_module_addrinfo names.
// (libdwfl scans every symbol per call: `every` thins the symbols probed.)
void expect_same_names(const std::string& path, std::size_t every, std::size_t stride_probes) {
  OpenModule m(path);
  ASSERT_NE(m.mod, nullptr) << path;
  SymbolTable table(m.mod);
  std::vector<std::uint64_t> pcs;
  std::uint64_t lo = ~0ull, hi = 0;
  std::size_t k = 0;
  for (auto [value, end] : m.symbol_ranges()) {
    if (value > kBase) lo = std::min(lo, value), hi = std::max(hi, end);
    if (k++ % every) continue;
    for (std::uint64_t pc : {value - 1, value, value + 1, (value + end) / 2, end - 1, end})
      pcs.push_back(pc);
  }
  for (k = 0; hi > lo && k < stride_probes; ++k)
    pcs.push_back(lo + (hi - lo) / stride_probes * k + k % 7);
  ASSERT_GT(table.size(), 10u) << path;
  for (std::uint64_t pc : pcs)
    ASSERT_EQ(show(table.name_at(pc)), show(m.libdwfl_name(pc)))
        << path << " at +0x" << std::hex << pc - kBase;
}

TEST(SymbolTable, NamesWhatLibdwflNamesInSystemLibraries) {
  expect_same_names("/lib/x86_64-linux-gnu/libc.so.6", 3, 1000);
  expect_same_names("/lib/x86_64-linux-gnu/libz.so.1", 1, 1000);
  expect_same_names("/lib/x86_64-linux-gnu/libstdc++.so.6", 8, 1000);
}

TEST(SymbolTable, NamesWhatLibdwflNamesInAStrippedLibrary) {
  expect_same_names(MEMTRAIL_MANY_EXPORTS_LIB, 5, 3000);
}

// The PyTorch case: a library with thousands of exported functions, no
// .symtab, no DWARF. Through the Symbolizer: exported functions by name,
// internal (static) ones as module+offset. That it is far faster than asking
// libdwfl per address (which scans every symbol each time; measured
// 2026-12-06 ~100x per address) is a speed for benchmarks, not asserted here.
TEST(SymbolTable, StrippedLibraryThroughTheSymbolizerNamesItsExports) {
  OpenModule m(MEMTRAIL_MANY_EXPORTS_LIB);
  ASSERT_NE(m.mod, nullptr);
  std::vector<std::uint64_t> pcs;  // inside each exported function
  for (auto [value, end] : m.symbol_ranges())
    if (end > value + 2) pcs.push_back(value + 2);
  ASSERT_GE(pcs.size(), 4000u);
  ModuleInfo info;
  info.id = 1;
  info.path = MEMTRAIL_MANY_EXPORTS_LIB;
  info.load_address = kBase;
  info.start = kBase;
  info.end = kBase + (1ull << 30);
  Symbolizer sym;
  sym.add_module(info);
  for (std::uint64_t pc : pcs) {
    const auto& frames = sym.resolve(pc + 1, true);  // a return address: looked up at pc
    ASSERT_EQ(frames.size(), 1u);
    ASSERT_EQ(frames[0].function.rfind("mt_export_", 0), 0u) << frames[0].describe();
    ASSERT_TRUE(frames[0].file.empty());
  }
  std::size_t direct = pcs.size() / 20;  // libdwfl names the same functions
  for (std::size_t k = 0; k < direct; ++k) ASSERT_NE(m.libdwfl_name(pcs[k]), nullptr);
}

}  // namespace
}  // namespace memtrail
