// The ModulePreloader (analyzer/src/module_preloader.hpp): it opens, beside
// the read, exactly the modules that stack nodes point into, forwards every
// callback to the visitor behind it, and what the Symbolizer resolves from
// its preopened modules equals what it resolves from modules it opens
// itself, warnings (and their order) included.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <link.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "memtrail/analysis.hpp"
#include "module_open.hpp"
#include "module_preloader.hpp"

extern "C" __attribute__((noinline)) void* preloader_test_return_address() {
  void* ra = __builtin_return_address(0);
  asm volatile("" : : "r"(ra) : "memory");
  return ra;
}
__attribute__((noinline)) void* preloader_test_caller() {
  void* ra = preloader_test_return_address();
  asm volatile("" : : "r"(ra) : "memory");
  return ra;
}

namespace memtrail {
namespace {

// Module records of this process as the recorder writes them (ids from 1,
// in dl_iterate_phdr's order; the executable first), without build ids.
std::vector<ModuleInfo> own_modules() {
  std::vector<ModuleInfo> out;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* out = static_cast<std::vector<ModuleInfo>*>(data);
        ModuleInfo m;
        std::uint64_t lo = ~0ull, hi = 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const auto& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          lo = std::min<std::uint64_t>(lo, info->dlpi_addr + ph.p_vaddr);
          hi = std::max<std::uint64_t>(hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
        }
        m.id = static_cast<std::uint32_t>(out->size() + 1);
        m.load_address = info->dlpi_addr;
        m.start = lo;
        m.end = hi;
        m.path = info->dlpi_name ? info->dlpi_name : "";
        out->push_back(m);
        return 0;
      },
      &out);
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  out.at(0).path = std::string(exe, n > 0 ? static_cast<std::size_t>(n) : 0);
  return out;
}

const ModuleInfo& module_holding(const std::vector<ModuleInfo>& modules, const void* p) {
  auto ip = reinterpret_cast<std::uint64_t>(p);
  for (const ModuleInfo& m : modules)
    if (ip >= m.start && ip < m.end) return m;
  ADD_FAILURE() << "no module holds " << p;
  return modules.at(0);
}

// Counts what reaches the visitor behind the preloader.
struct CountingVisitor : TraceVisitor {
  int modules = 0, nodes = 0, strings = 0;
  std::size_t events = 0;
  void on_module(const ModuleInfo&) override { ++modules; }
  void on_stack_node(const StackNode&) override { ++nodes; }
  void on_string(std::uint32_t, std::string_view) override { ++strings; }
  void on_events(const Event*, std::size_t n) override { events += n; }
};

// A return address in this executable and one in libc (printf's entry + 1
// stands for a return address inside printf).
std::uint64_t own_ip() {
  return reinterpret_cast<std::uint64_t>(preloader_test_caller());
}
std::uint64_t libc_ip() {
  return reinterpret_cast<std::uint64_t>(dlsym(RTLD_DEFAULT, "printf")) + 1;
}

TEST(ModulePreloader, OpensOnlyTheModulesThatStackNodesPointInto) {
  std::vector<ModuleInfo> modules = own_modules();
  ASSERT_GE(modules.size(), 3u);
  CountingVisitor next;
  detail::ModulePreloader preloader(next);
  for (const ModuleInfo& m : modules) preloader.on_module(m);
  preloader.on_string(1, "x");
  // Two nodes in this executable, one in libc: two modules, each once.
  preloader.on_stack_node(StackNode{1, 0, own_ip()});
  preloader.on_stack_node(StackNode{2, 1, libc_ip()});
  preloader.on_stack_node(StackNode{3, 2, own_ip() + 1});
  Event events[3];
  preloader.on_events(events, 3);

  EXPECT_EQ(next.modules, static_cast<int>(modules.size()));
  EXPECT_EQ(next.nodes, 3);
  EXPECT_EQ(next.strings, 1);
  EXPECT_EQ(next.events, 3u);
  std::vector<detail::OpenedModule> opened = preloader.take();
  ASSERT_EQ(opened.size(), 2u);
  const ModuleInfo& own = module_holding(modules, reinterpret_cast<void*>(own_ip()));
  const ModuleInfo& libc = module_holding(modules, reinterpret_cast<void*>(libc_ip()));
  EXPECT_EQ(opened[0].info, own);
  EXPECT_EQ(opened[1].info, libc);
  for (const auto& m : opened) {
    EXPECT_NE(m.mod, nullptr) << m.info.path;
    EXPECT_TRUE(m.warning.empty()) << m.warning;
  }
  EXPECT_TRUE(preloader.take().empty());  // handed over once
}

void expect_same_frames(const std::vector<Frame>& a, const std::vector<Frame>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].function, b[i].function) << i;
    EXPECT_EQ(a[i].file, b[i].file) << i;
    EXPECT_EQ(a[i].line, b[i].line) << i;
    EXPECT_EQ(a[i].inlined, b[i].inlined) << i;
    EXPECT_EQ(a[i].module, b[i].module) << i;
    EXPECT_EQ(a[i].offset, b[i].offset) << i;
  }
}

TEST(ModulePreloader, PreopenedModulesResolveAsModulesTheSymbolizerOpens) {
  std::vector<ModuleInfo> modules = own_modules();
  Symbolizer fresh, adopted;
  std::vector<detail::OpenedModule> preopened;
  for (const ModuleInfo& m : modules) {
    fresh.add_module(m);
    adopted.add_module(m);
  }
  for (std::uint64_t ip : {own_ip(), libc_ip()})
    preopened.push_back(
        detail::open_module(module_holding(modules, reinterpret_cast<void*>(ip)), true));
  adopted.adopt_preopened(std::move(preopened));
  for (std::uint64_t ip : {own_ip(), libc_ip()}) {
    const std::vector<Frame>& a = fresh.resolve(ip, true);
    const std::vector<Frame>& b = adopted.resolve(ip, true);
    ASSERT_FALSE(a.empty());
    EXPECT_FALSE(a.back().function.empty()) << a.back().describe();
    expect_same_frames(a, b);
  }
  EXPECT_NE(fresh.resolve(own_ip(), true).back().function.find("preloader_test_caller"),
            std::string::npos);
  EXPECT_TRUE(adopted.read_module_of(own_ip()));
}

TEST(ModulePreloader, APreopenedModulesWarningIsSaidAtItsFirstLookupInLookupOrder) {
  std::vector<ModuleInfo> modules = own_modules();
  ModuleInfo own = module_holding(modules, reinterpret_cast<void*>(own_ip()));
  ModuleInfo libc = module_holding(modules, reinterpret_cast<void*>(libc_ip()));
  own.build_id = "00";  // neither file is of this build
  libc.build_id = "11";
  Symbolizer fresh, adopted;
  for (Symbolizer* s : {&fresh, &adopted}) {
    s->add_module(own);
    s->add_module(libc);
  }
  std::vector<detail::OpenedModule> preopened;
  preopened.push_back(detail::open_module(own, true));  // opened first,
  preopened.push_back(detail::open_module(libc, true));
  adopted.adopt_preopened(std::move(preopened));
  EXPECT_TRUE(adopted.warnings().empty());
  for (Symbolizer* s : {&fresh, &adopted}) {
    s->resolve(libc_ip(), true);  // looked up last
    s->resolve(own_ip(), true);
    s->resolve(own_ip() + 1, true);
  }
  ASSERT_EQ(fresh.warnings().size(), 2u);
  EXPECT_EQ(adopted.warnings(), fresh.warnings());
  EXPECT_NE(adopted.warnings()[0].find("build id mismatch (trace 11"), std::string::npos);
  expect_same_frames(fresh.resolve(own_ip(), true), adopted.resolve(own_ip(), true));
  EXPECT_FALSE(adopted.read_module_of(own_ip()));
}

}  // namespace
}  // namespace memtrail
