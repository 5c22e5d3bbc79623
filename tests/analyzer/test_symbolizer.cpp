// The libdwfl symbolizer on this very test binary: function, file, line,
// inlined frames, build-id checks and graceful degradation.
#include <elf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <link.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "memtrail/analysis.hpp"

// Functions with known names and lines. The return address captured in
// `capture_return_address` lies in `outer_caller`, inside the code inlined
// from `inlined_helper`.
extern "C" __attribute__((noinline)) void* capture_return_address() {
  void* ra = __builtin_return_address(0);
  asm volatile("" : : "r"(ra) : "memory");
  return ra;
}
static inline __attribute__((always_inline)) void* inlined_helper() {
  return capture_return_address();  // kInlinedCallLine
}
__attribute__((noinline)) void* outer_caller() {
  void* ra = inlined_helper();  // kOuterCallLine
  asm volatile("" : : "r"(ra) : "memory");
  return ra;
}
constexpr std::uint32_t kInlinedCallLine = 23;
constexpr std::uint32_t kOuterCallLine = 26;

namespace memtrail {
namespace {

std::string read_build_id(const std::string& path) {
  elf_version(EV_CURRENT);
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return {};
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  const void* bits = nullptr;
  ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &bits) : -1;
  std::string hex;
  for (ssize_t i = 0; i < n; ++i) {
    char b[3];
    std::snprintf(b, sizeof b, "%02x", static_cast<const unsigned char*>(bits)[i]);
    hex += b;
  }
  if (elf) elf_end(elf);
  close(fd);
  return hex;
}

// The main executable's module record, as the recorder writes it.
ModuleInfo self_module() {
  ModuleInfo m;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* m = static_cast<ModuleInfo*>(data);
        std::uint64_t lo = ~0ull, hi = 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const auto& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          lo = std::min<std::uint64_t>(lo, info->dlpi_addr + ph.p_vaddr);
          hi = std::max<std::uint64_t>(hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
        }
        m->id = 1;
        m->load_address = info->dlpi_addr;
        m->start = lo;
        m->end = hi;
        return 1;  // the first entry is the executable
      },
      &m);
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  m.path = std::string(exe, n > 0 ? static_cast<std::size_t>(n) : 0);
  m.build_id = read_build_id(m.path);
  return m;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TEST(Symbolizer, ResolvesFunctionFileLineAndInlinedFrames) {
  ModuleInfo m = self_module();
  ASSERT_FALSE(m.build_id.empty()) << "test binary has no build id";
  auto ip = reinterpret_cast<std::uint64_t>(outer_caller());
  Symbolizer sym;
  sym.add_module(m);
  const std::vector<Frame>& frames = sym.resolve(ip, true);
  ASSERT_EQ(frames.size(), 2u) << frames[0].describe();
  // Internal-linkage inline functions carry no linkage name: the plain name.
  EXPECT_EQ(frames[0].function, "inlined_helper");
  EXPECT_TRUE(frames[0].inlined);
  EXPECT_EQ(frames[0].line, kInlinedCallLine);
  EXPECT_TRUE(ends_with(frames[0].file, "test_symbolizer.cpp")) << frames[0].file;
  EXPECT_EQ(frames[1].function, "outer_caller()");
  EXPECT_FALSE(frames[1].inlined);
  EXPECT_EQ(frames[1].line, kOuterCallLine);
  EXPECT_EQ(frames[1].module, m.path);
  EXPECT_EQ(frames[1].offset, ip - m.load_address);
  EXPECT_TRUE(sym.warnings().empty());
}

TEST(Symbolizer, BuildIdMismatchDegradesToModuleOffset) {
  ModuleInfo m = self_module();
  m.build_id = "deadbeef";
  auto ip = reinterpret_cast<std::uint64_t>(outer_caller());
  Symbolizer sym;
  sym.add_module(m);
  const std::vector<Frame>& frames = sym.resolve(ip, true);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_TRUE(frames[0].function.empty());
  char expect[64];
  std::snprintf(expect, sizeof expect, "+0x%llx",
                static_cast<unsigned long long>(ip - m.load_address));
  EXPECT_EQ(frames[0].describe(), m.path + expect);
  ASSERT_EQ(sym.warnings().size(), 1u);
  EXPECT_NE(sym.warnings()[0].find("build id mismatch"), std::string::npos);
}

TEST(Symbolizer, MissingFileAndUnknownAddressNeverFail) {
  ModuleInfo m;
  m.id = 3;
  m.path = "/nonexistent/libgone.so";
  m.load_address = 0x7f0000000000;
  m.start = 0x7f0000001000;
  m.end = 0x7f0000100000;
  Symbolizer sym;
  sym.add_module(m);
  const auto& f = sym.resolve(0x7f0000001234, true);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].describe(), "/nonexistent/libgone.so+0x1234");
  const auto& g = sym.resolve(0x1234, true);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].describe(), "0x1234");
  EXPECT_EQ(sym.warnings().size(), 1u);
}

TEST(Symbolizer, DisabledGivesModuleOffsetOnly) {
  ModuleInfo m = self_module();
  auto ip = reinterpret_cast<std::uint64_t>(outer_caller());
  Symbolizer sym;
  sym.set_enabled(false);
  sym.add_module(m);
  const auto& f = sym.resolve(ip, true);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(f[0].function.empty());
  EXPECT_EQ(f[0].offset, ip - m.load_address);
}

}  // namespace
}  // namespace memtrail

#include <fstream>

#include "run_command.hpp"
#include "trace_builder.hpp"

namespace memtrail {
namespace {

// analyze() writes TRACE.symbols and the next analysis reads frames from it
// instead of DWARF (proved by planting a name DWARF could not produce).
TEST(Symbolizer, SymbolCacheIsWrittenAndReused) {
  ModuleInfo m = self_module();
  auto ip = reinterpret_cast<std::uint64_t>(outer_caller());
  test::TraceBuilder b(test::temp_trace("symcache.mtr"));
  b.writer().add_module(m);
  b.pool(1, "malloc", PoolKind::heap);
  b.stack(1, 0, ip);
  b.alloc(1, 1, 0x10, 64, 1);
  const std::string& path = b.finish();
  const std::string cache = path + ".symbols";
  std::remove(cache.c_str());

  Analysis first = analyze(path);
  ASSERT_TRUE(first.error.empty()) << first.error;
  ASSERT_EQ(first.sites.size(), 1u);
  ASSERT_EQ(first.sites[0].frames.size(), 2u);
  EXPECT_EQ(first.sites[0].frames[1].function, "outer_caller()");
  std::string text = test::slurp(cache);
  ASSERT_NE(text.find("outer_caller()"), std::string::npos) << text;

  // Plant a different name under the same key: the cache must win.
  std::string planted = text;
  planted.replace(planted.find("outer_caller()"), 14, "cached_name()");
  std::ofstream(cache, std::ios::trunc) << planted;
  Analysis second = analyze(path);
  ASSERT_EQ(second.sites[0].frames.size(), 2u);
  EXPECT_EQ(second.sites[0].frames[1].function, "cached_name()");
  EXPECT_EQ(second.sites[0].frames[1].address, ip);
  EXPECT_EQ(second.sites[0].frames[1].module, m.path);

  // Without the cache, DWARF again; a damaged cache is ignored.
  AnalysisOptions no_cache;
  no_cache.symbol_cache = false;
  EXPECT_EQ(analyze(path, no_cache).sites[0].frames[1].function, "outer_caller()");
  std::ofstream(cache, std::ios::trunc) << "{not json";
  EXPECT_EQ(analyze(path).sites[0].frames[1].function, "outer_caller()");
  std::remove(cache.c_str());
}

// A nameless address of a module that was read is cached too (else every run
// opens the module through libdw again); one of a module that cannot be read
// is not, so the next run tries the file again and repeats its warning.
TEST(Symbolizer, SymbolCacheKeepsNamelessAddressesOfReadModulesOnly) {
  ModuleInfo m = self_module();
  ASSERT_FALSE(m.build_id.empty()) << "test binary has no build id";
  ModuleInfo gone;
  gone.id = 2;
  gone.path = "/nonexistent/libgone.so";
  gone.build_id = "0123456789abcdef";
  gone.load_address = 0x7f0000000000;
  gone.start = 0x7f0000001000;
  gone.end = 0x7f0000100000;
  // A string literal's bytes lie in .rodata, where no function is (an
  // offset near the module's start is not safe: a Debug build's DWARF keeps
  // discarded functions at address 0, and 0x11 read as one of them).
  static const char* const kNoFunctionHere = "bytes of .rodata, no function's";
  const std::uint64_t nameless = reinterpret_cast<std::uintptr_t>(kNoFunctionHere) + 1;
  ASSERT_TRUE(nameless >= m.start && nameless < m.end);
  test::TraceBuilder b(test::temp_trace("symcache_nameless.mtr"));
  b.writer().add_module(m);
  b.writer().add_module(gone);
  b.pool(1, "malloc", PoolKind::heap);
  b.stack(1, 0, nameless);
  b.stack(2, 0, 0x7f0000001234);
  b.alloc(1, 1, 0x10, 64, 1);
  b.alloc(2, 1, 0x100, 64, 2);
  const std::string& path = b.finish();
  const std::string cache = path + ".symbols";
  std::remove(cache.c_str());

  Analysis first = analyze(path);
  ASSERT_TRUE(first.error.empty()) << first.error;
  ASSERT_EQ(first.sites.size(), 2u);
  ASSERT_EQ(first.symbol_warnings.size(), 1u);
  std::string text = test::slurp(cache);
  char key[64];
  std::snprintf(key, sizeof key, ":%llx\"",
                static_cast<unsigned long long>(nameless - m.load_address));
  const std::size_t at = text.find(m.build_id + key);
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_EQ(text.find("0123456789abcdef"), std::string::npos) << text;

  // The cached nameless entry is what the next run shows (a planted name
  // proves it), and the unreadable module warns again.
  std::string planted = text;
  std::size_t empty_name = planted.find("[\"\",", at);
  ASSERT_NE(empty_name, std::string::npos) << text;
  planted.replace(empty_name, 4, "[\"planted()\",");
  std::ofstream(cache, std::ios::trunc) << planted;
  Analysis second = analyze(path);
  ASSERT_EQ(second.sites.size(), 2u);
  bool seen = false;
  for (const auto& site : second.sites)
    for (const Frame& f : site.frames)
      if (f.address == nameless && f.function == "planted()") {
        EXPECT_EQ(f.module, m.path);
        seen = true;
      }
  EXPECT_TRUE(seen);
  EXPECT_EQ(second.symbol_warnings.size(), 1u);
  std::remove(cache.c_str());
}

}  // namespace
}  // namespace memtrail
